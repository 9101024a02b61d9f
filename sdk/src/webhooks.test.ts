import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook, WebhookVerificationError, type WebhookFailure } from "./webhooks.ts";

/** "ok" or the failure reason, so each case reads as one line. */
function check(...args: Parameters<typeof verifyWebhook>): "ok" | WebhookFailure {
  try {
    verifyWebhook(...args);
    return "ok";
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

// The signature test vectors of docs/partners/webhooks.md (also checked against the server's signer in src/modules/webhooks)
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2Aqxyhz1sgA";
const oldSecret = "whsec_oldSecretOldSecretOldSecretOldSecret0000";
const t = 1767225600;
const body =
  '{"id":"0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90","type":"webhook.test","apiVersion":"v1","createdAt":"2026-01-01T00:00:00.000Z","occurredAt":"2026-01-01T00:00:00.000Z","property":{"code":"DEMO-IST"},"data":{"message":"hello"}}';
const header = `t=${t},v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b`;
const overlap = `${header},v1=641817600e36e217285e690469b5227e7da755b0d98838bd7a4c1d6de3ef9a83`;
const now = new Date(t * 1000);

describe("verifyWebhook", () => {
  it("accepts the documented vectors, as a string or as raw bytes", () => {
    expect(check(body, header, secret, { now })).toBe("ok");
    expect(check(new TextEncoder().encode(body), header, secret, { now })).toBe("ok");
  });

  it("accepts any matching v1 during a rotation, with either secret", () => {
    expect(check(body, overlap, secret, { now })).toBe("ok");
    expect(check(body, overlap, oldSecret, { now })).toBe("ok");
    expect(check(body, header, oldSecret, { now })).toBe("signature_mismatch");
  });

  it("keys the HMAC with the whole secret including whsec_", () => {
    expect(check(body, header, secret.slice("whsec_".length), { now })).toBe("signature_mismatch");
  });

  it("rejects a changed body, a changed timestamp and malformed headers", () => {
    expect(check(`${body} `, header, secret, { now })).toBe("signature_mismatch");
    expect(check(body.replace("hello", "hellO"), header, secret, { now })).toBe("signature_mismatch");
    expect(check(body, header.replace(`t=${t}`, `t=${t + 1}`), secret, { now })).toBe("signature_mismatch");
    expect(check(body, "", secret, { now })).toBe("missing_header");
    for (const bad of [
      "v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b",
      `t=${t}`,
      `t=${t},v1=`,
      `t=${t},v1=zz`,
      `t=abc,${header.split(",")[1]}`,
      `t=${t},t=${t + 1},${header.split(",")[1]}`,
      header.toUpperCase(),
    ]) {
      expect(check(body, bad, secret, { now }), bad).toBe("malformed_header");
    }
    expect(check(body, undefined, secret, { now })).toBe("missing_header");
    expect(check(body, header, "", { now })).toBe("missing_secret");
  });

  it("rejects timestamps more than the tolerance away, in both directions", () => {
    expect(check(body, header, secret, { now: (t + 300) * 1000 })).toBe("ok");
    expect(check(body, header, secret, { now: (t - 300) * 1000 })).toBe("ok");
    expect(check(body, header, secret, { now: (t + 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(check(body, header, secret, { now: (t - 301) * 1000 })).toBe("timestamp_out_of_tolerance");
    expect(check(body, header, secret, { now: (t + 1000) * 1000, toleranceSeconds: 1000 })).toBe("ok");
    // default now is the clock: a fresh signature passes, the 2026 vector does not
    const fresh = Math.floor(Date.now() / 1000);
    const sig = createHmac("sha256", secret).update(`${fresh}.${body}`).digest("hex");
    expect(check(body, `t=${fresh},v1=${sig}`, secret)).toBe("ok");
    expect(check(body, header, secret)).toBe(
      Math.abs(Date.now() / 1000 - t) <= 300 ? "ok" : "timestamp_out_of_tolerance",
    );
  });

  it("takes the header as Node gives it (string, list, undefined) and says why in the error message", () => {
    expect(check(body, [header], secret, { now })).toBe("ok");
    expect(
      check(body, [header, "v1=641817600e36e217285e690469b5227e7da755b0d98838bd7a4c1d6de3ef9a83"], oldSecret, { now }),
    ).toBe("ok");
    expect(check(body, [], secret, { now })).toBe("missing_header");
    expect(verifyWebhook(body, header, secret, { now })).toEqual({ timestamp: t });
    expect(() => verifyWebhook(body, header, secret, { now: (t + 3600) * 1000 })).toThrow(
      "Signed 3600 s ago, more than the 300 s allowed",
    );
    expect(() => verifyWebhook(`${body} `, header, secret, { now })).toThrow(/re-serialized/);
  });
});
