import { describe, expect, it } from "vitest";
import { createHmac, createPublicKey, timingSafeEqual, verify as cryptoVerify } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { createSecretBox, decodeKey, newSigningSecret, signatureHeader } from "./secrets.ts";
import { nextAttemptAt, retryDelaysMs } from "./schedule.ts";
import {
  ed25519PrivateKey,
  hmacKeyOf,
  newEd25519Pair,
  publicKeyOf,
  signingKeys,
  standardSignature,
} from "./standard-signature.ts";

// The published test vectors (docs/partners/webhooks.md, "Signature test vectors"); expected values computed with `openssl dgst -sha256 -hmac`.
const vectors = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2Aqxyhz1sgA",
  oldSecret: "whsec_oldSecretOldSecretOldSecretOldSecret0000",
  timestamp: 1767225600,
  body: '{"id":"0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90","type":"webhook.test","apiVersion":"v1","createdAt":"2026-01-01T00:00:00.000Z","occurredAt":"2026-01-01T00:00:00.000Z","property":{"code":"DEMO-IST"},"data":{"message":"hello"}}',
  header: "t=1767225600,v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b",
  rotatedHeader:
    "t=1767225600,v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b,v1=641817600e36e217285e690469b5227e7da755b0d98838bd7a4c1d6de3ef9a83",
};

/** A receiver's check as Stripe documents it: raw body, 300 s tolerance, constant-time compare, any v1 matches. */
function verify(header: string, body: string, secret: string, nowSeconds: number): boolean {
  const items = header.split(",").map((kv) => kv.split("=") as [string, string]);
  const t = Number(items.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest();
  return items
    .filter(([k]) => k === "v1")
    .some(([, v]) => v.length === 64 && timingSafeEqual(Buffer.from(v, "hex"), expected));
}

describe("signature", () => {
  it("matches the published vectors", () => {
    expect(signatureHeader([vectors.secret], vectors.timestamp, vectors.body)).toBe(vectors.header);
    expect(signatureHeader([vectors.secret, vectors.oldSecret], vectors.timestamp, Buffer.from(vectors.body))).toBe(
      vectors.rotatedHeader,
    );
  });

  it("verifies with a Stripe-style receiver and fails on any change", () => {
    expect(verify(vectors.header, vectors.body, vectors.secret, vectors.timestamp + 299)).toBe(true);
    expect(verify(vectors.rotatedHeader, vectors.body, vectors.oldSecret, vectors.timestamp)).toBe(true);
    expect(verify(vectors.header, vectors.body, vectors.oldSecret, vectors.timestamp)).toBe(false);
    expect(verify(vectors.header, vectors.body + " ", vectors.secret, vectors.timestamp)).toBe(false);
    expect(verify(vectors.header, vectors.body, vectors.secret, vectors.timestamp + 301)).toBe(false);
    expect(
      verify(vectors.header.replace("t=1767225600", "t=1767225601"), vectors.body, vectors.secret, vectors.timestamp),
    ).toBe(false);
  });

  it("makes whsec_ secrets of 32 random bytes in standard base64", () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe("Standard Webhooks signature", () => {
  const id = "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90";
  it("matches the published vectors and the standardwebhooks library's own signer", () => {
    const one = standardSignature(signingKeys([vectors.secret]), id, vectors.timestamp, vectors.body);
    expect(one).toBe("v1,2nigoo94xxy5hy9sn4FZziUjzTnbuRUkTQ6FRU6hO0Y=");
    expect(one).toBe(new Webhook(vectors.secret).sign(id, new Date(vectors.timestamp * 1000), vectors.body));
    expect(
      standardSignature(
        signingKeys([vectors.secret, vectors.oldSecret]),
        id,
        vectors.timestamp,
        Buffer.from(vectors.body),
      ),
    ).toBe("v1,2nigoo94xxy5hy9sn4FZziUjzTnbuRUkTQ6FRU6hO0Y= v1,S93fdILbFxoAlnovrf+77+9ZF3iydA//ftGQD/3rRWk=");
  });

  it("is accepted by the standardwebhooks library, for a new secret and for one made before standard base64", () => {
    const fresh = newSigningSecret();
    const header = standardSignature(signingKeys([fresh]), id, vectors.timestamp, vectors.body);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The library checks the timestamp against the real clock: sign "now" for it.
    const now = Math.floor(Date.now() / 1000);
    const headers = (secrets: string[]) => ({
      "webhook-id": id,
      "webhook-timestamp": String(now),
      "webhook-signature": standardSignature(signingKeys(secrets), id, now, vectors.body),
    });
    expect(new Webhook(fresh).verify(vectors.body, headers([fresh]))).toEqual(JSON.parse(vectors.body));
    expect(() => new Webhook(fresh).verify(vectors.body + " ", headers([fresh]))).toThrow();
    // An old base64url secret signs with its decoded bytes (a receiver passes those bytes to the library).
    expect(
      new Webhook(hmacKeyOf(vectors.secret), { format: "raw" }).verify(vectors.body, headers([vectors.secret])),
    ).toBeTruthy();
    // During a rotation both values are there, space-separated, and either secret verifies.
    const both = headers([fresh, vectors.secret]);
    expect(both["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(hmacKeyOf(vectors.secret), { format: "raw" }).verify(vectors.body, both)).toBeTruthy();
    expect(new Webhook(fresh).verify(vectors.body, both)).toBeTruthy();
  });

  it("adds v1a ed25519 signatures that node:crypto verifies with the whpk_ key alone", () => {
    const pair = newEd25519Pair();
    expect(pair.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOf(pair.secretKey)).toBe(pair.publicKey);
    const old = newEd25519Pair();
    const header = standardSignature(
      signingKeys([newSigningSecret()], [ed25519PrivateKey(pair.secretKey), ed25519PrivateKey(old.secretKey)]),
      id,
      vectors.timestamp,
      vectors.body,
    );
    const parts = header.split(" ");
    expect(parts.map((p) => p.split(",")[0])).toEqual(["v1", "v1a", "v1a"]);
    const verifyWith = (publicKey: string, body: string) => {
      const key = createPublicKey({
        key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey.slice(5), "base64").toString("base64url") },
        format: "jwk",
      });
      const signed = Buffer.from(`${id}.${vectors.timestamp}.${body}`);
      return parts.some(
        (p) => p.startsWith("v1a,") && cryptoVerify(null, signed, key, Buffer.from(p.slice(4), "base64")),
      );
    };
    expect(verifyWith(pair.publicKey, vectors.body)).toBe(true);
    expect(verifyWith(old.publicKey, vectors.body)).toBe(true);
    expect(verifyWith(newEd25519Pair().publicKey, vectors.body)).toBe(false);
    expect(verifyWith(pair.publicKey, vectors.body + " ")).toBe(false);
  });
});

describe("secret box", () => {
  const box = createSecretBox(decodeKey("a".repeat(64))!);
  it("round-trips, binds the row id and detects tampering", () => {
    const sealed = box.seal("whsec_x", "row-1");
    expect(sealed).not.toContain("whsec_x");
    expect(box.open(sealed, "row-1")).toBe("whsec_x");
    expect(() => box.open(sealed, "row-2")).toThrow();
    const parts = sealed.split(".");
    parts[3] = Buffer.from("whsec_y").toString("base64url");
    expect(() => box.open(parts.join("."), "row-1")).toThrow();
    expect(() => createSecretBox(decodeKey("b".repeat(64))!).open(sealed, "row-1")).toThrow();
  });
  it("accepts 32-byte keys only", () => {
    expect(decodeKey("ab".repeat(32))).toHaveLength(32);
    expect(decodeKey(Buffer.alloc(32, 7).toString("base64"))).toHaveLength(32);
    expect(decodeKey("abc")).toBeUndefined();
    expect(decodeKey(Buffer.alloc(16).toString("base64"))).toBeUndefined();
  });
});

describe("retry schedule", () => {
  const first = new Date("2026-01-01T00:00:00.000Z");
  it("waits about 30 s, 2 min, 8 min, 32 min, 2 h, 8.5 h, 12 h, within +-10 %", () => {
    expect(retryDelaysMs).toEqual([30_000, 120_000, 480_000, 1_920_000, 7_200_000, 30_600_000, 43_200_000]);
    for (const [i, base] of retryDelaysMs.entries()) {
      for (const r of [0, 0.25, 0.5, 0.999999]) {
        const now = new Date(first.getTime() + 1000);
        const next = nextAttemptAt({ attemptsMade: i + 1, firstAttemptAt: now, now, random: () => r });
        if (next === undefined) continue; // past the 24 h window with this jitter
        const delay = next.getTime() - now.getTime();
        expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.9));
        expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.1));
      }
    }
  });
  it("stops after 8 attempts and never schedules past 24 h from the first", () => {
    expect(nextAttemptAt({ attemptsMade: 8, firstAttemptAt: first, now: first, random: () => 0.5 })).toBeUndefined();
    const late = new Date(first.getTime() + 20 * 3600_000);
    expect(nextAttemptAt({ attemptsMade: 7, firstAttemptAt: first, now: late, random: () => 0 })).toBeUndefined();
    expect(nextAttemptAt({ attemptsMade: 6, firstAttemptAt: first, now: late, random: () => 0 })).toBeUndefined();
    const early = new Date(first.getTime() + 10 * 3600_000);
    expect(nextAttemptAt({ attemptsMade: 7, firstAttemptAt: first, now: early, random: () => 0.5 })?.getTime()).toBe(
      early.getTime() + 43_200_000,
    );
  });
});
