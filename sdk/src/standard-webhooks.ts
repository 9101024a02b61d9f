import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from "node:crypto";
import { WebhookVerificationError, type VerifyWebhookOptions } from "./webhooks.ts";

/** Request headers as Node gives them (`req.headers`) or as fetch gives them (`Headers`). */
export type WebhookHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: WebhookHeaders, name: string): string {
  const value =
    typeof headers.get === "function"
      ? (headers as { get(name: string): string | null }).get(name)
      : (headers as Readonly<Record<string, string | readonly string[] | undefined>>)[name];
  return (typeof value === "string" ? value : Array.isArray(value) ? value.join(" ") : "").trim();
}

/** Base64 in the standard alphabet or the URL-safe one, padded or not. */
const base64Text = /^[A-Za-z0-9+/_-]+={0,2}$/;

function verifierOf(key: string): { version: "v1" | "v1a"; check: (content: Buffer, sig: Buffer) => boolean } {
  if (key.startsWith("whpk_")) {
    const raw = key.slice(5);
    const bytes = base64Text.test(raw) ? Buffer.from(raw, "base64") : Buffer.alloc(0);
    if (bytes.length !== 32)
      throw new WebhookVerificationError("missing_secret", "The whpk_ public key is not 32 bytes of base64.");
    const publicKey: KeyObject = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: bytes.toString("base64url") },
      format: "jwk",
    });
    return { version: "v1a", check: (content, sig) => sig.length === 64 && verify(null, content, publicKey, sig) };
  }
  const raw = key.startsWith("whsec_") ? key.slice(6) : key;
  const secret = base64Text.test(raw) ? Buffer.from(raw, "base64") : Buffer.alloc(0);
  if (secret.length === 0)
    throw new WebhookVerificationError(
      "missing_secret",
      "No signing key given (the whsec_ secret or whpk_ public key).",
    );
  return {
    version: "v1",
    check: (content, sig) => {
      const expected = createHmac("sha256", secret).update(content).digest();
      return sig.length === expected.length && timingSafeEqual(sig, expected);
    },
  };
}

/**
 * Checks the Standard Webhooks headers of a delivery (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * against the raw request body. The signed content is `<webhook-id>.<webhook-timestamp>.<raw body>`;
 * `webhook-signature` is a space-separated list of `<version>,<base64>`. With the address's `whsec_` secret the
 * `v1` signatures are checked (HMAC-SHA256 keyed with the base64-decoded bytes after `whsec_`); with an ed25519
 * address's `whpk_` public key the `v1a` ones (no secret needed on the receiving side). Any match passes (two
 * during a rotation); a timestamp more than the tolerance away from now fails. Returns the event id (the
 * envelope's `id`: deduplicate on it) and the signed time; throws WebhookVerificationError saying why otherwise.
 */
export function verifyStandardWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  key: string,
  options: VerifyWebhookOptions = {},
): { id: string; timestamp: number } {
  if (key === "")
    throw new WebhookVerificationError(
      "missing_secret",
      "No signing key given (the whsec_ secret or whpk_ public key).",
    );
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (id === "" || timestamp === "" || signatures === "")
    throw new WebhookVerificationError(
      "missing_header",
      "The request lacks webhook-id, webhook-timestamp or webhook-signature.",
    );
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError("malformed_header", "webhook-timestamp is not unix seconds.");
  const verifier = verifierOf(key);
  const candidates: Buffer[] = [];
  for (const part of signatures.split(" ")) {
    const comma = part.indexOf(",");
    if (comma === -1 || part.slice(0, comma) !== verifier.version) continue;
    const value = part.slice(comma + 1);
    if (base64Text.test(value)) candidates.push(Buffer.from(value, "base64"));
  }
  if (candidates.length === 0)
    throw new WebhookVerificationError(
      "malformed_header",
      `webhook-signature has no ${verifier.version},<base64> signature${verifier.version === "v1a" ? " (is ed25519 on for this address?)" : ""}.`,
    );
  const nowMs =
    options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  const tolerance = options.toleranceSeconds ?? 300;
  const skew = Math.round(nowMs / 1000 - Number(timestamp));
  if (Math.abs(skew) > tolerance)
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `Signed ${Math.abs(skew)} s ${skew >= 0 ? "ago" : "in the future"}, more than the ${tolerance} s allowed (a replay, or this machine's clock is off).`,
    );
  const content = Buffer.concat([
    Buffer.from(`${id}.${timestamp}.`, "utf8"),
    typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody,
  ]);
  let ok = false;
  // every candidate is checked, so the time taken does not tell which one matched
  for (const sig of candidates) ok = verifier.check(content, sig) || ok;
  if (!ok)
    throw new WebhookVerificationError(
      "signature_mismatch",
      `No ${verifier.version} signature matches this body and key (was the body re-serialized before verifying, or is it another address's key?).`,
    );
  return { id, timestamp: Number(timestamp) };
}
