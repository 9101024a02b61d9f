import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicKey, verify as cryptoVerify } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { systemClock } from "../../src/lib/clock.ts";
import { recordEvent } from "../../src/modules/events/index.ts";
import { createSecretBox, decodeKey } from "../../src/modules/webhooks/secrets.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  testSecretKey,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

// Real clock throughout: both libraries check the timestamp against the time now.
let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let manager: { accessToken: string };
const stripe = new Stripe("sk_test_not_used_no_network");

/** The receiver's secrets per path, as a receiver would keep them. */
const secrets = new Map<string, { hmac: string[]; publicKeys: string[] }>();

/** What the receiver's libraries said about one request. */
interface Verdict {
  stripe: boolean[];
  standard: boolean[];
  ed25519: boolean[];
}
const verdicts: Verdict[] = [];

function headerMap(h: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]));
}

/** The five-line ed25519 check of docs/partners/webhooks.md with node:crypto only. */
function verifyEd25519(publicKey: string, headers: Record<string, string>, rawBody: string): boolean {
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey.slice(5), "base64").toString("base64url") },
    format: "jwk",
  });
  const signed = Buffer.from(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${rawBody}`);
  if (Math.abs(Date.now() / 1000 - Number(headers["webhook-timestamp"])) > 300) return false;
  return (headers["webhook-signature"] ?? "")
    .split(" ")
    .some((s) => s.startsWith("v1a,") && cryptoVerify(null, signed, key, Buffer.from(s.slice(4), "base64")));
}

function attempt(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  // The receiver verifies every request with Stripe's constructEvent and the standardwebhooks library (and
  // node:crypto for ed25519) and answers 400 when its current secrets do not all verify.
  receiver.behave((req, res, body) => {
    const keys = secrets.get(req.url ?? "") ?? { hmac: [], publicKeys: [] };
    const h = headerMap(req.headers);
    const v: Verdict = {
      stripe: keys.hmac.map((s) =>
        attempt(() => stripe.webhooks.constructEvent(body, h["service-signature"] ?? "", s)),
      ),
      standard: keys.hmac.map((s) => attempt(() => new Webhook(s).verify(body, h))),
      ed25519: keys.publicKeys.map((k) => verifyEd25519(k, h, body)),
    };
    verdicts.push(v);
    const ok = [...v.stripe, ...v.standard, ...v.ed25519].every(Boolean);
    res.writeHead(ok ? 204 : 400);
    res.end();
  });
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
  property = await createTestProperty(app);
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function rest(method: string, path: string, body?: unknown) {
  const res = await fetch(`${app.baseUrl}/api/panel/v1${path}`, {
    method,
    headers: { ...bearer(manager.accessToken), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

async function emit(occurredAt = new Date()): Promise<string> {
  return app.deps.transact((tx) =>
    recordEvent(tx, {
      propertyId: property.id,
      type: "reservation.created",
      occurredAt,
      data: { id: "r1", code: "R-1" },
    }),
  );
}

/** Emits one event and returns the request the receiver got for `path` and what its libraries said. */
async function deliverOne(path: string) {
  const before = receiver.received.length;
  const eventId = await emit();
  const deadline = Date.now() + 5_000;
  for (;;) {
    const got = receiver.received.slice(before).find((r) => r.path === path && r.headers["webhook-id"] === eventId);
    // The verdict is pushed right after the request is recorded (same tick).
    if (got !== undefined) return { got, verdict: verdicts[receiver.received.indexOf(got)]!, eventId };
    if (Date.now() > deadline) throw new Error(`no delivery to ${path}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("receivers written with common libraries", () => {
  it("Stripe's constructEvent and the standardwebhooks library both accept a delivery, side by side headers", async () => {
    const r = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/std"),
      eventTypes: ["reservation.created"],
    });
    expect(r.status).toBe(201);
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.body.endpoint.publicKey).toBeNull();
    secrets.set("/std", { hmac: [r.body.secret], publicKeys: [] });
    const { got, verdict, eventId } = await deliverOne("/std");
    expect(verdict).toEqual({ stripe: [true], standard: [true], ed25519: [] });
    expect(got.headers["webhook-id"]).toBe(eventId);
    expect(got.headers["webhook-timestamp"]).toBe(/^t=(\d+),/.exec(String(got.headers["service-signature"]))![1]);
    expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(got.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // A tampered body fails with both libraries.
    const h = headerMap(got.headers);
    expect(attempt(() => new Webhook(r.body.secret).verify(got.body + " ", h))).toBe(false);
    expect(attempt(() => stripe.webhooks.constructEvent(got.body + " ", h["service-signature"]!, r.body.secret))).toBe(
      false,
    );

    // Rotation: for 24 h both headers carry both signatures; old and new secrets verify with both libraries.
    const rotated = await rest("POST", `/webhook-endpoints/${r.body.endpoint.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    secrets.set("/std", { hmac: [rotated.body.secret, r.body.secret], publicKeys: [] });
    const after = await deliverOne("/std");
    expect(after.verdict).toEqual({ stripe: [true, true], standard: [true, true], ed25519: [] });
    expect(String(after.got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(String(after.got.headers["service-signature"]).split(",v1=")).toHaveLength(3);
    await rest("DELETE", `/webhook-endpoints/${r.body.endpoint.id}`);
  });

  it("a secret made before standard base64 (base64url) keeps working: Service-Signature as before, webhook-signature with its bytes", async () => {
    const r = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/old"),
      eventTypes: ["reservation.created"],
    });
    // An address created before this release: its secret is base64url with `-` and `_`.
    const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2-LaLaSw2Aqxyhz1s_";
    await app.deps.db.pool.query("update webhook_endpoints set secret_sealed = $2 where id = $1", [
      r.body.endpoint.id,
      createSecretBox(decodeKey(testSecretKey)!).seal(oldSecret, r.body.endpoint.id),
    ]);
    secrets.set("/old", { hmac: [], publicKeys: [] });
    const { got } = await deliverOne("/old");
    const h = headerMap(got.headers);
    expect(attempt(() => stripe.webhooks.constructEvent(got.body, h["service-signature"]!, oldSecret))).toBe(true);
    // The standardwebhooks library refuses URL-safe base64 in a secret string; given the decoded bytes it verifies.
    const bytes = Buffer.from(oldSecret.slice(6), "base64url");
    expect(attempt(() => new Webhook(bytes, { format: "raw" }).verify(got.body, h))).toBe(true);
    await rest("DELETE", `/webhook-endpoints/${r.body.endpoint.id}`);
  });

  it("ed25519 per address: v1a verifies with the whpk_ key and node:crypto alone, through a rotation", async () => {
    const r = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/ed"),
      eventTypes: ["reservation.created"],
      ed25519: true,
    });
    expect(r.status).toBe(201);
    const pk = r.body.endpoint.publicKey as string;
    expect(pk).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    secrets.set("/ed", { hmac: [r.body.secret], publicKeys: [pk] });
    const first = await deliverOne("/ed");
    expect(first.verdict).toEqual({ stripe: [true], standard: [true], ed25519: [true] });
    expect(
      String(first.got.headers["webhook-signature"])
        .split(" ")
        .map((s) => s.split(",")[0]),
    ).toEqual(["v1", "v1a"]);

    const rotated = await rest("POST", `/webhook-endpoints/${r.body.endpoint.id}/rotate-secret`, {});
    const newPk = rotated.body.endpoint.publicKey as string;
    expect(newPk).not.toBe(pk);
    expect(rotated.body.endpoint.previousPublicKey).toBe(pk);
    secrets.set("/ed", { hmac: [rotated.body.secret, r.body.secret], publicKeys: [newPk, pk] });
    const second = await deliverOne("/ed");
    expect(second.verdict).toEqual({ stripe: [true, true], standard: [true, true], ed25519: [true, true] });
    expect(
      String(second.got.headers["webhook-signature"])
        .split(" ")
        .map((s) => s.split(",")[0]),
    ).toEqual(["v1", "v1", "v1a", "v1a"]);

    // Switching ed25519 off drops the key: no v1a any more.
    const off = await rest("PATCH", `/webhook-endpoints/${r.body.endpoint.id}`, { ed25519: false });
    expect(off.body.endpoint.publicKey).toBeNull();
    secrets.set("/ed", { hmac: [rotated.body.secret], publicKeys: [] });
    const third = await deliverOne("/ed");
    expect(
      String(third.got.headers["webhook-signature"])
        .split(" ")
        .every((s) => s.startsWith("v1,")),
    ).toBe(true);
    await rest("DELETE", `/webhook-endpoints/${r.body.endpoint.id}`);
  });
});

describe("event times", () => {
  it("createdAt is never before occurredAt, even when the change's transaction started earlier", async () => {
    const r = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/times"),
      eventTypes: ["reservation.created"],
    });
    secrets.set("/times", { hmac: [r.body.secret], publicKeys: [] });
    const before = receiver.received.length;
    for (let i = 0; i < 3; i++) {
      await app.deps.transact(async (tx) => {
        await tx.query("select 1");
        // The change takes a moment inside its transaction; occurredAt is taken after it.
        await new Promise((res) => setTimeout(res, 15));
        await recordEvent(tx, {
          propertyId: property.id,
          type: "reservation.created",
          occurredAt: new Date(),
          data: { id: "r", code: "R" },
        });
      });
    }
    let got = receiver.received.slice(before).filter((g) => g.path === "/times");
    for (let i = 0; i < 100 && got.length < 3; i++) {
      await new Promise((res) => setTimeout(res, 50));
      got = receiver.received.slice(before).filter((g) => g.path === "/times");
    }
    expect(got).toHaveLength(3);
    for (const g of got) {
      const e = JSON.parse(g.body);
      expect(Date.parse(e.createdAt)).toBeGreaterThanOrEqual(Date.parse(e.occurredAt));
    }
    await rest("DELETE", `/webhook-endpoints/${r.body.endpoint.id}`);
  });
});
