import { generateKeyPairSync, sign } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyStandardWebhook, type WebhookHeaders } from "./standard-webhooks.ts";
import { WebhookVerificationError, type WebhookFailure } from "./webhooks.ts";

function check(...args: Parameters<typeof verifyStandardWebhook>): "ok" | WebhookFailure {
  try {
    verifyStandardWebhook(...args);
    return "ok";
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

// The signature test vectors of docs/partners/webhooks.md
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2Aqxyhz1sgA";
const oldSecret = "whsec_oldSecretOldSecretOldSecretOldSecret0000";
const t = 1767225600;
const id = "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90";
const body =
  '{"id":"0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90","type":"webhook.test","apiVersion":"v1","createdAt":"2026-01-01T00:00:00.000Z","occurredAt":"2026-01-01T00:00:00.000Z","property":{"code":"DEMO-IST"},"data":{"message":"hello"}}';
const signature = "v1,2nigoo94xxy5hy9sn4FZziUjzTnbuRUkTQ6FRU6hO0Y=";
const overlap = `${signature} v1,S93fdILbFxoAlnovrf+77+9ZF3iydA//ftGQD/3rRWk=`;
const now = new Date(t * 1000);
const headers = (sig: string, ts = String(t), webhookId = id): Record<string, string> => ({
  "webhook-id": webhookId,
  "webhook-timestamp": ts,
  "webhook-signature": sig,
});

/** An ed25519 key pair as the service shows it: the public key as whpk_ + base64 of its 32 bytes. */
function ed25519Pair() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  const v1a = (content: string) => `v1a,${sign(null, Buffer.from(content), privateKey).toString("base64")}`;
  return { whpk: `whpk_${raw.toString("base64")}`, v1a };
}

describe("verifyStandardWebhook", () => {
  it("accepts the documented vectors (v1 with the whsec_ secret), from Node headers or fetch Headers, and answers the id", () => {
    expect(verifyStandardWebhook(body, headers(signature), secret, { now })).toEqual({ id, timestamp: t });
    expect(check(new TextEncoder().encode(body), new Headers(headers(signature)), secret, { now })).toBe("ok");
    expect(check(body, headers(overlap), oldSecret, { now })).toBe("ok");
    expect(check(body, headers(signature), oldSecret, { now })).toBe("signature_mismatch");
  });

  it("agrees with the standardwebhooks library's signer, and takes a secret made before standard base64 (URL-safe)", () => {
    const urlSafe = "whsec_-_-_" + "A".repeat(40);
    for (const s of [secret, urlSafe]) {
      const bytes = Buffer.from(s.slice(6), "base64");
      const signed = new Webhook(bytes, { format: "raw" }).sign(id, now, body);
      expect(check(body, headers(signed), s, { now }), s).toBe("ok");
    }
  });

  it("verifies v1a with nothing but the whpk_ public key, ignoring the v1 beside it", () => {
    const pair = ed25519Pair();
    const v1a = pair.v1a(`${id}.${t}.${body}`);
    expect(check(body, headers(`${signature} ${v1a}`), pair.whpk, { now })).toBe("ok");
    expect(check(`${body} `, headers(`${signature} ${v1a}`), pair.whpk, { now })).toBe("signature_mismatch");
    expect(check(body, headers(v1a, String(t + 1)), pair.whpk, { now })).toBe("signature_mismatch");
    expect(check(body, headers(v1a, String(t), `${id}x`), pair.whpk, { now })).toBe("signature_mismatch");
    expect(check(body, headers(`${signature} ${v1a}`), ed25519Pair().whpk, { now })).toBe("signature_mismatch");
    // an HMAC-only delivery checked with a public key: no v1a to check
    expect(check(body, headers(signature), pair.whpk, { now })).toBe("malformed_header");
    // a v1a value is not taken for a v1 one (the secret checks only v1)
    expect(check(body, headers(v1a), secret, { now })).toBe("malformed_header");
  });

  it("says why: missing headers, malformed values, stale or future timestamps, no key", () => {
    const pair = ed25519Pair();
    expect(check(body, {}, secret, { now })).toBe("missing_header");
    expect(check(body, { ...headers(signature), "webhook-id": undefined }, secret, { now })).toBe("missing_header");
    expect(check(body, headers(signature, "abc"), secret, { now })).toBe("malformed_header");
    expect(check(body, headers("v1,"), secret, { now })).toBe("malformed_header");
    expect(check(body, headers("v2,abc="), secret, { now })).toBe("malformed_header");
    expect(check(body, headers(signature), secret, { now: (t + 300) * 1000 })).toBe("ok");
    expect(check(body, headers(signature), secret, { now: (t + 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(check(body, headers(signature), secret, { now: (t - 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(check(body, headers(signature), "", { now })).toBe("missing_secret");
    expect(check(body, headers(signature), "whpk_short", { now })).toBe("missing_secret");
    expect(check(body, headers(signature), pair.whpk.slice(0, -4), { now })).toBe("missing_secret");
    expect(() => verifyStandardWebhook(`${body} `, headers(signature), secret, { now })).toThrow(/re-serialized/);
    const list: WebhookHeaders = { ...headers(signature), "webhook-signature": ["v1,AAAA", signature] };
    expect(check(body, list, secret, { now })).toBe("ok");
  });
});
