import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHmac, timingSafeEqual } from "node:crypto";
import { ManualClock } from "../../src/lib/clock.ts";
import { readOutbox } from "../../src/lib/mail.ts";
import { recordEvent, type EventType } from "../../src/modules/events/index.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let manager: { accessToken: string; userId: string; email: string };
const clock = new ManualClock("2026-11-22T09:00:00.000Z");
let jitter = 0.5;
const resolver = testResolver();

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startWebhookApp({
    ca,
    clock,
    webhooks: { resolver, random: () => jitter, timeoutMs: 2_000, dispatch: false },
  });
  property = await createTestProperty(app);
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  sessionAt = clock.now().getTime();
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});
beforeEach(() => {
  jitter = 0.5;
  receiver.behave((_req, res) => {
    res.writeHead(204);
    res.end();
  });
});

let sessionAt = 0;
/** The manager's token, renewed after the test clock moved (access tokens live 15 minutes). */
async function managerToken(): Promise<string> {
  if (Math.abs(clock.now().getTime() - sessionAt) > 5 * 60_000) {
    manager = await createStaffSession(app, { propertyCode: property.code, role: "manager", email: manager.email });
    sessionAt = clock.now().getTime();
  }
  return manager.accessToken;
}

async function rest(method: string, path: string, body?: unknown, explicitToken?: string) {
  const token = explicitToken ?? (await managerToken());
  const res = await fetch(`${app.baseUrl}/api/panel/v1${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

async function createEndpoint(
  eventTypes: string[] = ["reservation.created"],
  path = "/hook",
): Promise<{ id: string; secret: string }> {
  const r = await rest("POST", "/webhook-endpoints", {
    url: receiver.url(path),
    eventTypes,
    description: "test receiver",
  });
  expect(r.status).toBe(201);
  return { id: r.body.endpoint.id, secret: r.body.secret };
}

async function emit(
  type: EventType = "reservation.created",
  data: object = { id: "r1", code: "R-1" },
): Promise<string> {
  return app.deps.transact((tx) =>
    recordEvent(tx, { propertyId: property.id, type, occurredAt: new Date("2026-11-22T08:59:59.123Z"), data }),
  );
}

async function sql<R = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> {
  return (await app.deps.db.pool.query(text, params)).rows as R[];
}

async function until<T>(probe: () => Promise<T | undefined>, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stripe's documented receiver check, written independently of the service's signer. */
function stripeVerify(header: string, rawBody: string, secret: string, nowSeconds: number): boolean {
  const pairs = header.split(",").map((p) => {
    const i = p.indexOf("=");
    return [p.slice(0, i), p.slice(i + 1)] as const;
  });
  const t = pairs.find(([k]) => k === "t")?.[1];
  if (t === undefined || !/^\d+$/.test(t) || Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${t}.${rawBody}`).digest();
  return pairs.some(
    ([k, v]) => k === "v1" && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, "hex"), expected),
  );
}

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

async function deliveriesOf(endpointId: string) {
  return sql<{
    id: string;
    status: string;
    attempts: number;
    next_attempt_at: Date | null;
    event_id: string;
    last_error_class: string | null;
  }>(
    "select id, status, attempts, next_attempt_at, event_id, last_error_class from webhook_deliveries where endpoint_id = $1 order by created_at, id",
    [endpointId],
  );
}

describe("delivery", () => {
  it("sends a committed event at once with exactly the documented headers and a verifiable signature", async () => {
    const ep = await createEndpoint(["reservation.created"]);
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const before = receiver.received.length;
    const started = performance.now();
    const eventId = await emit("reservation.created", { id: "r1", code: "R-1", channel: null });

    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got!.at - started).toBeLessThan(1_000);
    const h = got!.headers;
    expect(h["content-type"]).toBe("application/json");
    expect(h["user-agent"]).toBe("Service-Webhooks/1.0");
    expect(h["service-event-id"]).toBe(eventId);
    expect(h["service-event-type"]).toBe("reservation.created");
    expect(h["service-delivery-attempt"]).toBe("1");
    const [delivery] = await deliveriesOf(ep.id);
    expect(h["service-delivery-id"]).toBe(delivery!.id);
    expect(h["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(String(h["service-signature"]).startsWith(`t=${nowSeconds()},`)).toBe(true);
    expect(stripeVerify(h["service-signature"] as string, got!.body, ep.secret, nowSeconds())).toBe(true);
    expect(stripeVerify(h["service-signature"] as string, got!.body + "x", ep.secret, nowSeconds())).toBe(false);
    const envelope = JSON.parse(got!.body);
    expect(Object.keys(envelope)).toEqual(["id", "type", "apiVersion", "createdAt", "occurredAt", "property", "data"]);
    expect(envelope).toMatchObject({
      id: eventId,
      type: "reservation.created",
      apiVersion: "v1",
      occurredAt: "2026-11-22T08:59:59.123Z",
      property: { code: property.code },
      data: { id: "r1", code: "R-1", channel: null },
    });
    expect(envelope.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await until(async () => ((await deliveriesOf(ep.id))[0]?.status === "succeeded" ? true : undefined))).toBe(
      true,
    );
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("sends only subscribed types, never to other properties' addresses, and nothing twice per event", async () => {
    const ep = await createEndpoint(["guest.checked_in"]);
    const other = await createTestProperty(app);
    const otherManager = await createStaffSession(app, { propertyCode: other.code, role: "manager" });
    const otherEp = await rest(
      "POST",
      "/webhook-endpoints",
      { url: receiver.url("/other"), eventTypes: ["guest.checked_in"] },
      otherManager.accessToken,
    );
    expect(otherEp.status).toBe(201);
    const before = receiver.received.length;
    await emit("reservation.created");
    const eventId = await emit("guest.checked_in", { reservationId: "x" });
    await receiver.waitFor(before + 1);
    // The fan-out job may run again (at-least-once): it creates no second delivery and sends nothing.
    expect(await app.parts.engine.fanOut([eventId])).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    const got = receiver.received.slice(before);
    expect(got.map((g) => [g.path, g.headers["service-event-type"]])).toEqual([["/hook", "guest.checked_in"]]);
    expect(await deliveriesOf(ep.id)).toHaveLength(1);
    expect(await deliveriesOf(otherEp.body.endpoint.id)).toHaveLength(0);
    // Another property's address is invisible: 404, not 403.
    expect((await rest("GET", `/webhook-endpoints/${otherEp.body.endpoint.id}`)).status).toBe(404);
    expect((await rest("POST", `/webhook-endpoints/${otherEp.body.endpoint.id}/test`)).status).toBe(404);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("retries on the schedule with jitter, then fails after 8 attempts", async () => {
    const ep = await createEndpoint(["reservation.updated"]);
    receiver.behave((_req, res) => {
      res.writeHead(500);
      res.end("no");
    });
    await emit("reservation.updated");
    const first = await until(async () => {
      const [d] = await deliveriesOf(ep.id);
      return d !== undefined && d.attempts === 1 && d.last_error_class !== null ? d : undefined;
    });
    const expectedDelays = [30_000, 120_000, 480_000, 1_920_000, 7_200_000, 30_600_000, 43_200_000];
    const jitters = [0, 0.999, 0.5, 0, 0.999, 0, 0];
    let next = first.next_attempt_at!;
    let last = clock.now();
    for (const [i, delay] of expectedDelays.entries()) {
      const gap = next.getTime() - last.getTime();
      expect(gap).toBeGreaterThanOrEqual(delay * 0.9 - 1);
      expect(gap).toBeLessThanOrEqual(delay * 1.1 + 1);
      // Not due yet: nothing happens a second early.
      clock.set(new Date(next.getTime() - 1000));
      expect(await app.parts.engine.runDue()).toEqual([]);
      clock.set(next);
      last = next;
      jitter = jitters[i]!;
      const [o] = await app.parts.engine.runDue();
      expect(o).toMatchObject({ attempt: i + 2, httpStatus: 500, errorClass: "http_status" });
      if (i < expectedDelays.length - 1) next = o!.nextAttemptAt!;
      else expect(o!.status).toBe("failed");
    }
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: "failed", attempts: 8, next_attempt_at: null });
    const headers = receiver.received
      .filter((r) => r.headers["service-delivery-id"] === d!.id)
      .map((r) => r.headers["service-delivery-attempt"]);
    expect(headers).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
    clock.advance(48 * 3600_000);
    expect(await app.parts.engine.runDue()).toEqual([]);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("the every-minute sweeper queues due retries in one statement and a worker makes them", async () => {
    const ep = await createEndpoint(["invoice.issued"]);
    receiver.behave((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    await Promise.all([emit("invoice.issued", { id: "i1" }), emit("invoice.issued", { id: "i2" })]);
    const failed = await until(async () => {
      const ds = await deliveriesOf(ep.id);
      return ds.length === 2 && ds.every((d) => d.attempts === 1 && d.last_error_class !== null) ? ds : undefined;
    });
    receiver.behave((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    // the retry jobs wait for their own start time (30 s on the real clock); the sweeper finds both due now
    clock.set(new Date(Math.max(...failed.map((d) => d.next_attempt_at!.getTime()))));
    expect(await app.parts.engine.sweepDue()).toBe(2);
    const done = await until(async () => {
      const ds = await deliveriesOf(ep.id);
      return ds.every((d) => d.status === "succeeded") ? ds : undefined;
    });
    expect(done.map((d) => d.attempts)).toEqual([2, 2]);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("an attempt that cannot be prepared fails alone; the batch's other deliveries are recorded once", async () => {
    const good = await createEndpoint(["guest.checked_out"], "/good");
    const bad = await createEndpoint(["guest.checked_out"], "/bad");
    // a signing secret the service cannot open (a restore under another WEBHOOK_SECRET_KEY, say)
    await sql("update webhook_endpoints set secret_sealed = 'v1.not-a-sealed-secret' where id = $1", [bad.id]);
    const before = receiver.received.length;
    await emit("guest.checked_out", { reservationId: "r9" });
    const [ok] = await until(async () => {
      const ds = await deliveriesOf(good.id);
      return ds[0]?.status === "succeeded" ? ds : undefined;
    });
    const [failed] = await until(async () => {
      const ds = await deliveriesOf(bad.id);
      return ds[0]?.last_error_class === "internal" ? ds : undefined;
    });
    expect(ok!.attempts).toBe(1);
    expect(failed).toMatchObject({ status: "pending", attempts: 1 });
    // retries of the bad one never drag the good one along
    for (let i = 0; i < 3; i++) {
      clock.advance(3 * 3600_000);
      await app.parts.engine.runDue();
    }
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(["/good"]);
    expect((await deliveriesOf(good.id))[0]).toMatchObject({ status: "succeeded", attempts: 1 });
    expect((await deliveriesOf(bad.id))[0]!.attempts).toBeGreaterThan(1);
    await rest("DELETE", `/webhook-endpoints/${good.id}`);
    await rest("DELETE", `/webhook-endpoints/${bad.id}`);
  });

  it("never retries past 24 hours from the first attempt", async () => {
    const ep = await createEndpoint(["reservation.cancelled"]);
    receiver.behave((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    jitter = 0.999; // every delay +10 %: the 8th attempt would start after 25.5 h
    await emit("reservation.cancelled");
    await until(async () => ((await deliveriesOf(ep.id))[0]?.last_error_class ? true : undefined));
    const firstAt = clock.now().getTime();
    let outcome;
    for (let i = 0; i < 10; i++) {
      const [d] = await deliveriesOf(ep.id);
      if (d!.status !== "pending") break;
      clock.set(d!.next_attempt_at!);
      [outcome] = await app.parts.engine.runDue();
    }
    const [d] = await deliveriesOf(ep.id);
    expect(d).toMatchObject({ status: "failed", attempts: 7 });
    expect(outcome!.status).toBe("failed");
    expect(clock.now().getTime() - firstAt).toBeLessThan(24 * 3600_000);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });
});

describe("batches", () => {
  it("settles each delivery of a batch on its own: successes and failures side by side, then a batch of retries", async () => {
    const good = await createEndpoint(["reservation.created"], "/good");
    const bad = await createEndpoint(["reservation.created"], "/bad");
    receiver.behave((req, res) => {
      res.writeHead(req.url === "/bad" ? 500 : 204);
      res.end();
    });
    const before = receiver.received.length;
    // Three events in one transaction: their fan-out jobs are fetched, claimed and recorded together.
    const eventIds = await app.deps.transact(async (tx) => {
      const ids: string[] = [];
      for (const code of ["R-1", "R-2", "R-3"])
        ids.push(
          await recordEvent(tx, {
            propertyId: property.id,
            type: "reservation.created",
            occurredAt: clock.now(),
            data: { code },
          }),
        );
      return ids;
    });
    const got = (await receiver.waitFor(before + 6)).slice(before);
    const sent = (path: string) =>
      got
        .filter((g) => g.path === path)
        .map((g) => [g.headers["service-event-id"], g.headers["service-delivery-attempt"]]);
    expect(sent("/good").sort()).toEqual(eventIds.map((id) => [id, "1"]).sort());
    expect(sent("/bad").sort()).toEqual(eventIds.map((id) => [id, "1"]).sort());
    const settled = async (ep: { id: string }) => {
      const ds = await deliveriesOf(ep.id);
      return ds.length === 3 && ds.every((x) => x.last_error_class !== null || x.status === "succeeded")
        ? ds
        : undefined;
    };
    expect((await until(() => settled(good))).map((x) => [x.status, x.attempts])).toEqual(
      Array(3).fill(["succeeded", 1]),
    );
    const failing = await until(() => settled(bad));
    expect(failing.map((x) => [x.status, x.attempts, x.last_error_class])).toEqual(
      Array(3).fill(["pending", 1, "http_status"]),
    );
    const attempts = await sql<{ endpoint_id: string; attempt: number; http_status: number }>(
      "select endpoint_id, attempt, http_status from webhook_attempts where delivery_id = any($1::uuid[]) order by http_status",
      [[...(await deliveriesOf(good.id)), ...failing].map((x) => x.id)],
    );
    expect(attempts.map((a) => [a.endpoint_id, a.attempt, a.http_status])).toEqual([
      ...Array(3).fill([good.id, 1, 204]),
      ...Array(3).fill([bad.id, 1, 500]),
    ]);
    const health = async (ep: { id: string }) =>
      (
        await sql<{ failures_since_success: number; failing_since: Date | null }>(
          "select failures_since_success, failing_since from webhook_endpoints where id = $1",
          [ep.id],
        )
      )[0];
    expect(await health(bad)).toMatchObject({ failures_since_success: 3, failing_since: expect.any(Date) });
    expect(await health(good)).toMatchObject({ failures_since_success: 0, failing_since: null });

    // The retries come due together and are claimed, sent and recorded as one batch; success resets the count.
    receiver.behave((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    clock.set(new Date(Math.max(...failing.map((x) => x.next_attempt_at!.getTime()))));
    const outcomes = await app.parts.engine.runDue();
    expect(outcomes.map((o) => [o.attempt, o.httpStatus, o.status])).toEqual(Array(3).fill([2, 204, "succeeded"]));
    expect(new Set(outcomes.map((o) => o.deliveryId))).toEqual(new Set(failing.map((x) => x.id)));
    expect((await deliveriesOf(bad.id)).map((x) => [x.status, x.attempts])).toEqual(Array(3).fill(["succeeded", 2]));
    expect(await health(bad)).toMatchObject({ failures_since_success: 0, failing_since: null });
    // Nothing is due any more, and nothing is sent twice.
    expect(await app.parts.engine.runDue()).toEqual([]);
    expect(receiver.received.length - before).toBe(9);
    await rest("DELETE", `/webhook-endpoints/${good.id}`);
    await rest("DELETE", `/webhook-endpoints/${bad.id}`);
  });
});

describe("body limit", () => {
  it("records an event whose body would exceed 256 KiB as failed, sends nothing and never truncates", async () => {
    const ep = await createEndpoint(["reservation.updated"]);
    const before = receiver.received.length;
    await emit("reservation.updated", { id: "big", notes: "x".repeat(256 * 1024) });
    const d = await until(async () => {
      const [row] = await deliveriesOf(ep.id);
      return row?.status === "failed" ? row : undefined;
    });
    expect(d).toMatchObject({ attempts: 1, last_error_class: "payload_too_large" });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.length).toBe(before);
    // Just under the limit goes out whole.
    await emit("reservation.updated", { id: "fits", notes: "y".repeat(250 * 1024) });
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(Buffer.byteLength(got!.body)).toBeGreaterThan(250 * 1024);
    expect(JSON.parse(got!.body).data.notes).toHaveLength(250 * 1024);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });
});

describe("closing, re-enabling and the panel", () => {
  it("closes an address after 24 h without success and >= 5 failures: deliveries stop, e-mail and notification", async () => {
    const ep = await createEndpoint(["availability.changed", "invoice.issued"]);
    receiver.behave((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    await emit("availability.changed", { from: "2026-11-22", to: "2026-11-23" });
    await until(async () => ((await deliveriesOf(ep.id))[0]?.last_error_class ? true : undefined));
    // 8 attempts within ~23 h: failing, but not yet 24 h.
    for (let i = 0; i < 10; i++) {
      const [d] = await deliveriesOf(ep.id);
      if (d!.status !== "pending") break;
      clock.set(d!.next_attempt_at!);
      await app.parts.engine.runDue();
    }
    expect((await rest("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint.status).toBe("OPEN");
    // A second event whose first attempt fails after 24 h of failures closes the address.
    clock.advance(90 * 60_000);
    await emit("invoice.issued", { invoiceId: "i1" });
    await emit("availability.changed", { from: "2026-11-24", to: "2026-11-25" });
    await until(async () =>
      (await rest("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint.status === "CLOSED" ? true : undefined,
    );
    const got = (await rest("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint;
    expect(got.closedReason).toMatch(/24 hours/);
    expect(got.closedAt).not.toBeNull();
    // Nothing stays pending: an attempt already under way when the address closed (e.g. a fan-out of an earlier
    // event that ran late, under load) is settled as cancelled when it finishes.
    await until(async () => ((await deliveriesOf(ep.id)).every((d) => d.status !== "pending") ? true : undefined));
    expect(
      (await deliveriesOf(ep.id)).some((d) => d.status === "cancelled"),
      JSON.stringify(await deliveriesOf(ep.id)),
    ).toBe(true);
    // No new deliveries while closed; due work does nothing.
    const count = (await deliveriesOf(ep.id)).length;
    const before = receiver.received.length;
    await emit("invoice.issued", { invoiceId: "i2" });
    await new Promise((r) => setTimeout(r, 300));
    clock.advance(3600_000);
    expect(await app.parts.engine.runDue()).toEqual([]);
    expect(await deliveriesOf(ep.id)).toHaveLength(count);
    expect(receiver.received.length).toBe(before);
    // The creator is told: an e-mail in the outbox and a panel notification.
    const mails = await until(async () => {
      const m = (await readOutbox(app.dataDir)).filter((x) => x.to === manager.email);
      return m.length > 0 ? m : undefined;
    });
    expect(mails[0]!.subject).toMatch(/Webhook address closed/);
    expect(mails[0]!.text).toContain(receiver.url("/hook"));
    const notes = await rest("GET", "/notifications");
    expect(notes.status).toBe(200);
    const note = notes.body.notifications.find((n: { data: { endpointId?: string } }) => n.data.endpointId === ep.id);
    expect(note).toMatchObject({ kind: "webhook.endpoint_closed", title: "Webhook address closed", readAt: null });
    const read = await rest("POST", `/notifications/${note.id}/read`, {});
    expect(read.status).toBe(200);
    expect(read.body.notification.readAt).not.toBeNull();
    expect((await rest("POST", `/notifications/00000000-0000-7000-8000-000000000000/read`, {})).status).toBe(404);

    // Re-enable: open again with a clean count; new events flow.
    receiver.behave((_req, res) => {
      res.writeHead(200);
      res.end("ok");
    });
    const enabled = await rest("POST", `/webhook-endpoints/${ep.id}/enable`, {});
    expect(enabled.body.endpoint).toMatchObject({ status: "OPEN", closedAt: null, closedReason: null });
    const after = receiver.received.length;
    await emit("invoice.issued", { invoiceId: "i3" });
    await receiver.waitFor(after + 1);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("rotation: the old key signs a second v1 for 24 h, then stops", async () => {
    const ep = await createEndpoint(["reservation.created"]);
    const rotated = await rest("POST", `/webhook-endpoints/${ep.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(ep.secret);
    expect(rotated.body.endpoint.previousSecretExpiresAt).toBe(
      new Date(clock.now().getTime() + 24 * 3600_000).toISOString(),
    );
    let before = receiver.received.length;
    await emit("reservation.created");
    let [got] = (await receiver.waitFor(before + 1)).slice(before);
    let sig = String(got!.headers["service-signature"]);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(stripeVerify(sig, got!.body, newSecret, nowSeconds())).toBe(true);
    expect(stripeVerify(sig, got!.body, ep.secret, nowSeconds())).toBe(true);
    // The new key's value comes first.
    expect(stripeVerify(sig.split(",").slice(0, 2).join(","), got!.body, newSecret, nowSeconds())).toBe(true);

    clock.advance(24 * 3600_000 + 1000);
    before = receiver.received.length;
    await emit("reservation.created");
    [got] = (await receiver.waitFor(before + 1)).slice(before);
    sig = String(got!.headers["service-signature"]);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stripeVerify(sig, got!.body, newSecret, nowSeconds())).toBe(true);
    expect(stripeVerify(sig, got!.body, ep.secret, nowSeconds())).toBe(false);
    // Secrets are stored sealed, never in clear.
    const [row] = await sql<{ secret_sealed: string; previous_secret_sealed: string }>(
      "select secret_sealed, previous_secret_sealed from webhook_endpoints where id = $1",
      [ep.id],
    );
    expect(row!.secret_sealed).not.toContain(newSecret.slice(6));
    expect(row!.previous_secret_sealed).not.toContain(ep.secret.slice(6));
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("test button, history paging, resend with the same event id, and the 30-day purge", async () => {
    const ep = await createEndpoint(["folio.payment_posted"]);
    let before = receiver.received.length;
    const test = await rest("POST", `/webhook-endpoints/${ep.id}/test`, {});
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ httpStatus: 204, error: null });
    expect(typeof test.body.durationMs).toBe("number");
    const [t] = (await receiver.waitFor(before + 1)).slice(before);
    expect(t!.headers["service-event-type"]).toBe("webhook.test");
    expect(t!.headers["service-delivery-id"]).toBe(test.body.deliveryId);
    expect(stripeVerify(String(t!.headers["service-signature"]), t!.body, ep.secret, nowSeconds())).toBe(true);
    expect(JSON.parse(t!.body)).toMatchObject({
      type: "webhook.test",
      apiVersion: "v1",
      property: { code: property.code },
    });

    receiver.behave((_req, res) => {
      res.writeHead(400);
      res.end();
    });
    const failedTest = await rest("POST", `/webhook-endpoints/${ep.id}/test`, {});
    expect(failedTest.body).toMatchObject({ httpStatus: 400, error: expect.stringMatching(/400/) });
    receiver.behave((_req, res) => {
      res.writeHead(204);
      res.end();
    });

    before = receiver.received.length;
    const eventId = await emit("folio.payment_posted", { paymentId: "p1" });
    await receiver.waitFor(before + 1);
    const [original] = (await deliveriesOf(ep.id)).filter((d) => d.event_id === eventId);
    await until(async () =>
      (await deliveriesOf(ep.id)).find((d) => d.id === original!.id)?.status === "succeeded" ? true : undefined,
    );
    before = receiver.received.length;
    const resent = await rest("POST", `/webhook-endpoints/${ep.id}/deliveries/${original!.id}/resend`, {});
    expect(resent.status).toBe(200);
    expect(resent.body.deliveryId).not.toBe(original!.id);
    const [again] = (await receiver.waitFor(before + 1)).slice(before);
    expect(again!.headers["service-event-id"]).toBe(eventId);
    expect(again!.headers["service-delivery-id"]).toBe(resent.body.deliveryId);
    expect(again!.headers["service-delivery-attempt"]).toBe("1");
    expect(
      (await rest("POST", `/webhook-endpoints/${ep.id}/deliveries/00000000-0000-7000-8000-000000000000/resend`, {}))
        .status,
    ).toBe(404);

    // History: newest first, no body or key, cursor paging.
    await until(async () =>
      (await sql("select 1 from webhook_attempts where delivery_id = $1", [resent.body.deliveryId])).length > 0
        ? true
        : undefined,
    );
    const page1 = await rest("GET", `/webhook-endpoints/${ep.id}/deliveries?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.deliveries).toHaveLength(2);
    expect(page1.body.deliveries[0]).toMatchObject({
      deliveryId: resent.body.deliveryId,
      eventId,
      eventType: "folio.payment_posted",
      attempt: 1,
      httpStatus: 204,
      errorClass: null,
      deliveryStatus: "SUCCEEDED",
    });
    expect(JSON.stringify(page1.body)).not.toContain("whsec_");
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await rest("GET", `/webhook-endpoints/${ep.id}/deliveries?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.deliveries).toHaveLength(2);
    expect(page2.body.deliveries[1]).toMatchObject({ eventType: "webhook.test", httpStatus: 204 });
    expect(page2.body.nextCursor).toBeNull();
    expect((await rest("GET", `/webhook-endpoints/${ep.id}/deliveries?cursor=garbage`)).status).toBe(400);

    // Purge: nothing younger than 30 days goes; everything older does.
    clock.advance(29 * 24 * 3600_000);
    await app.parts.engine.purge();
    expect((await rest("GET", `/webhook-endpoints/${ep.id}/deliveries`)).body.deliveries).toHaveLength(4);
    clock.advance(2 * 24 * 3600_000);
    const purged = await app.parts.engine.purge();
    expect(purged.attempts).toBeGreaterThanOrEqual(4);
    expect((await rest("GET", `/webhook-endpoints/${ep.id}/deliveries`)).body.deliveries).toHaveLength(0);
    expect(await deliveriesOf(ep.id)).toHaveLength(0);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("sends nothing while the partner API is off platform-wide, and queues nothing for later", async () => {
    const ep = await createEndpoint(["reservation.created"]);
    receiver.behave((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    await emit("reservation.created");
    await until(async () => ((await deliveriesOf(ep.id))[0]?.last_error_class ? true : undefined));
    await sql("update platform_settings set partner_api_enabled = false");
    try {
      const before = receiver.received.length;
      await emit("reservation.created");
      clock.advance(60_000);
      expect(await app.parts.engine.runDue()).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.length).toBe(before);
      const ds = await deliveriesOf(ep.id);
      expect(ds).toHaveLength(1);
      expect(ds[0]).toMatchObject({ status: "cancelled", last_error_class: "partner_api_disabled" });
      expect((await rest("POST", `/webhook-endpoints/${ep.id}/test`, {})).status).toBe(409);
    } finally {
      await sql("update platform_settings set partner_api_enabled = true");
    }
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
  });

  it("disabling stops pending deliveries; nothing accumulates while disabled", async () => {
    const ep = await createEndpoint(["reservation.created"]);
    receiver.behave((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    await emit("reservation.created");
    await until(async () => ((await deliveriesOf(ep.id))[0]?.last_error_class ? true : undefined));
    const disabled = await rest("POST", `/webhook-endpoints/${ep.id}/disable`, {});
    expect(disabled.body.endpoint.status).toBe("DISABLED");
    expect((await deliveriesOf(ep.id))[0]!.status).toBe("cancelled");
    await emit("reservation.created");
    await new Promise((r) => setTimeout(r, 200));
    expect(await deliveriesOf(ep.id)).toHaveLength(1);
    await rest("DELETE", `/webhook-endpoints/${ep.id}`);
    expect((await rest("GET", `/webhook-endpoints/${ep.id}`)).status).toBe(404);
  });

  it("validates addresses at creation and update, limits 10 per property, and needs integrations.manage", async () => {
    const bad = [
      "http://receiver.test/hook",
      `https://user:pw@receiver.test:${receiver.port}/`,
      `https://receiver.test:${receiver.port}/#x`,
      "https://receiver.test:80/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[fe80::1]:8443/",
      "https://100.64.1.1/",
      "https://nx.invalid/",
    ];
    for (const url of bad) {
      const r = await rest("POST", "/webhook-endpoints", { url, eventTypes: ["reservation.created"] });
      expect(r.status, url).toBe(422);
      expect(r.body.error.details[0].field).toBe("url");
    }
    resolver.answers.set("metadata.test", ["169.254.169.254"]);
    resolver.answers.set("mixed.test", ["127.0.0.1", "169.254.169.254"]);
    expect(
      (await rest("POST", "/webhook-endpoints", { url: "https://metadata.test/", eventTypes: ["reservation.created"] }))
        .status,
    ).toBe(422);
    expect(
      (await rest("POST", "/webhook-endpoints", { url: "https://mixed.test/", eventTypes: ["reservation.created"] }))
        .status,
    ).toBe(422);
    expect((await rest("POST", "/webhook-endpoints", { url: receiver.url(), eventTypes: [] })).status).toBe(422);
    expect(
      (await rest("POST", "/webhook-endpoints", { url: receiver.url(), eventTypes: ["reservation.deleted"] })).status,
    ).toBe(422);

    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await createEndpoint(["reservation.created"], `/n${i}`)).id);
    const eleventh = await rest("POST", "/webhook-endpoints", {
      url: receiver.url(),
      eventTypes: ["reservation.created"],
    });
    expect(eleventh.status).toBe(409);
    const list = await rest("GET", "/webhook-endpoints");
    expect(list.body.endpoints).toHaveLength(10);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    expect(list.body.endpoints[0]).toMatchObject({
      status: "OPEN",
      createdBy: manager.userId,
      closedAt: null,
      eventTypes: ["reservation.created"],
    });

    const patched = await rest("PATCH", `/webhook-endpoints/${ids[0]}`, {
      eventTypes: ["guest.checked_out", "webhook.test"],
      description: "renamed",
    });
    expect(patched.body.endpoint).toMatchObject({
      eventTypes: ["guest.checked_out"],
      description: "renamed",
      url: receiver.url("/n0"),
    });
    expect((await rest("PATCH", `/webhook-endpoints/${ids[0]}`, { url: "https://169.254.169.254/" })).status).toBe(422);
    for (const id of ids) expect((await rest("DELETE", `/webhook-endpoints/${id}`)).status).toBe(204);

    const viewer = await createStaffSession(app, { propertyCode: property.code, role: "viewer" });
    expect((await rest("GET", "/webhook-endpoints", undefined, viewer.accessToken)).status).toBe(403);
    expect(
      (
        await rest(
          "POST",
          "/webhook-endpoints",
          { url: receiver.url(), eventTypes: ["reservation.created"] },
          viewer.accessToken,
        )
      ).status,
    ).toBe(403);
    expect((await rest("GET", "/webhook-endpoints", undefined, "nope")).status).toBe(401);
  });
});
