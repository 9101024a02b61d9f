import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";

/**
 * Standard Webhooks signatures (`webhook-signature`), next to `Service-Signature`. The signed content
 * is `<webhook-id>.<webhook-timestamp>.<raw body>`; each signature is `<version>,<base64>` and several are
 * separated by spaces: `v1` (HMAC-SHA256 keyed with the bytes base64-decoded after `whsec_`) for every secret in
 * use, and `v1a` (ed25519) for every key pair of an address that chose asymmetric signatures.
 */
export interface SigningKeys {
  /** Current secret first, then the pre-rotation one during its 24 h overlap. */
  secrets: readonly string[];
  /** ed25519 private keys, current first, then the pre-rotation one during its overlap (empty: HMAC only). */
  ed25519: readonly KeyObject[];
}

/**
 * The HMAC key of a `whsec_` secret: the decoded bytes after the prefix. Node's base64 decoder accepts both the
 * standard alphabet (new secrets) and base64url (secrets made before standard base64), so old secrets still
 * sign; only a receiver library that insists on the standard alphabet needs a rotated secret.
 */
export function hmacKeyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

export function standardSignature(keys: SigningKeys, id: string, unixSeconds: number, body: string | Buffer): string {
  const prefix = `${id}.${unixSeconds}.`;
  const parts: string[] = [];
  for (const secret of keys.secrets) {
    const mac = createHmac("sha256", hmacKeyOf(secret));
    mac.update(prefix);
    mac.update(body);
    parts.push(`v1,${mac.digest("base64")}`);
  }
  if (keys.ed25519.length > 0) {
    const content = Buffer.concat([
      Buffer.from(prefix, "utf8"),
      typeof body === "string" ? Buffer.from(body, "utf8") : body,
    ]);
    for (const key of keys.ed25519) parts.push(`v1a,${sign(null, content, key).toString("base64")}`);
  }
  return parts.join(" ");
}

/** A new ed25519 key pair: the private key as `whsk_` + base64 PKCS#8 (kept sealed), the public one as `whpk_` + base64 of its 32 bytes. */
export function newEd25519Pair(): { secretKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    secretKey: `whsk_${privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")}`,
    publicKey: publicKeyText(publicKey),
  };
}

export function ed25519PrivateKey(secretKey: string): KeyObject {
  return createPrivateKey({
    key: Buffer.from(secretKey.replace(/^whsk_/, ""), "base64"),
    format: "der",
    type: "pkcs8",
  });
}

/** `whpk_` + the raw 32-byte public key in base64 (the JWK `x` bytes). */
export function publicKeyText(key: KeyObject): string {
  const jwk = key.export({ format: "jwk" });
  return `whpk_${Buffer.from(jwk.x ?? "", "base64url").toString("base64")}`;
}

export function publicKeyOf(secretKey: string): string {
  return publicKeyText(createPublicKey(ed25519PrivateKey(secretKey)));
}
