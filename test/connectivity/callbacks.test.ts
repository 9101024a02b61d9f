import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { WebhookService } from "../../gen/hotelops/webhook/v1/webhook_pb.js";
import { systemClock } from "../../src/lib/clock.ts";
import { ariPushCellsPerMessage, setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Received,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

// Partners are told outcomes and get ARI pushed with values: callback addresses of a partner client (added by the
// property's manager or an operator, never by the partner), sent to by the hotel webhook engine, on the real clock
// (the production pusher and dispatcher of the app's worker role, coalescing window 1 s).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let other: { id: string; code: string };
let manager: { accessToken: string; userId: string };
let partner: { clientId: string; accessToken: string };
let stranger: { clientId: string; accessToken: string };
let ids: { dbl: string; sgl: string; bar: string; nrf: string };
const failPaths = new Set<string>();
let grpc: Client<typeof ConnectivityService>;
let connect: Client<typeof ConnectivityService>;
let panelConnect: Client<typeof WebhookService>;

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  receiver.behave((req, res, body) => {
    const type = (JSON.parse(body) as Json).type as string;
    const fail = failPaths.has(`${req.url}|${type}`);
    res.writeHead(fail ? 500 : 204);
    res.end();
  });
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
  property = await createTestProperty(app, { code: "CB-1", businessDate: "2027-01-01" });
  other = await createTestProperty(app, { code: "CB-2", businessDate: "2027-01-01" });
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const sgl = await inv.createRoomType(property.id, { code: "SGL", name: "Single", maxOccupancy: 1 });
  for (let i = 0; i < 3; i++) await inv.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
  await inv.createRoom(property.id, { number: "20", roomTypeId: sgl.id });
  const bar = await inv.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, sgl.id],
  });
  const nrf = await inv.createRatePlan(property.id, {
    code: "NRF",
    name: "Non refundable",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  ids = { dbl: dbl.id, sgl: sgl.id, bar: bar.id, nrf: nrf.id };
  await inv.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2028-06-01",
    amountMinor: 25000n,
  });
  for (const [kind, code, external] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, {
      propertyCode: property.code,
      provider: "acme",
      kind,
      code,
      externalCode: external,
    });
  partner = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["ari.read", "ari.write", "reservations.write", "reservations.read"],
    approved: true,
  });
  stranger = await createTestClient(app, { provider: "other", propertyCodes: [other.code], scopes: ["ari.read"] });
  grpc = createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl }));
  connect = createClient(ConnectivityService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
  panelConnect = createClient(WebhookService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: {
      ...bearer(token),
      ...(body !== undefined ? { "content-type": "application/json", "idempotency-key": randomUUID() } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as Json };
}

async function addCallback(path: string, eventTypes: string[]): Promise<{ id: string; secret: string }> {
  const r = await call("POST", "/api/panel/v1/partner-callbacks", manager.accessToken, {
    clientId: partner.clientId,
    url: receiver.url(path),
    eventTypes,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.callback.id, secret: r.body.secret };
}

/** Requests of one path, parsed; waits until `count` of them satisfy `pick`. */
async function bodies(path: string, count: number, pick: (b: Json) => boolean = () => true, ms = 8_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = receiver.received.filter((r) => r.path === path).map((r) => ({ r, b: JSON.parse(r.body) as Json }));
    const hits = got.filter((x) => pick(x.b));
    if (hits.length >= count) return hits;
    if (Date.now() > deadline) throw new Error(`${path}: ${hits.length} of ${count} requests within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function verify(r: Received, secret: string): boolean {
  const header = String(r.headers["service-signature"]);
  const t = /t=(\d+)/.exec(header)?.[1];
  const v1 = [...header.matchAll(/v1=([0-9a-f]+)/g)].map((m) => m[1]);
  const want = createHmac("sha256", secret).update(`${t}.${r.body}`).digest("hex");
  return v1.includes(want);
}

const ariWrite = (changes: unknown[]) =>
  call("POST", `/api/v1/properties/${property.code}/ari`, partner.accessToken, { changes });

describe("callback addresses", () => {
  it("are added by the property's manager, listed, limited to 10 per client and revocable; bad input is 4xx", async () => {
    const bad = await call("POST", "/api/panel/v1/partner-callbacks", manager.accessToken, {
      clientId: partner.clientId,
      url: "http://receiver.test/x",
      eventTypes: ["ari.updated"],
    });
    expect(bad.status).toBe(422);
    const badType = await call("POST", "/api/panel/v1/partner-callbacks", manager.accessToken, {
      clientId: partner.clientId,
      url: receiver.url("/x"),
      eventTypes: ["folio.payment_posted"],
    });
    expect(badType.status).toBe(422);
    expect(badType.body.error.details[0].field).toBe("eventTypes");
    // a client of another property is not found, like a client that does not exist
    const foreign = await call("POST", "/api/panel/v1/partner-callbacks", manager.accessToken, {
      clientId: stranger.clientId,
      url: receiver.url("/x"),
      eventTypes: ["ari.updated"],
    });
    expect(foreign.status).toBe(404);
    // the partner itself cannot add one (staff only)
    const self = await call("POST", "/api/panel/v1/partner-callbacks", partner.accessToken, {
      clientId: partner.clientId,
      url: receiver.url("/x"),
      eventTypes: ["ari.updated"],
    });
    expect([401, 403]).toContain(self.status);

    const made: string[] = [];
    for (let i = 0; i < 10; i++) made.push((await addCallback(`/limit-${i}`, ["partner_message.processed"])).id);
    const eleventh = await call("POST", "/api/panel/v1/partner-callbacks", manager.accessToken, {
      clientId: partner.clientId,
      url: receiver.url("/limit-10"),
      eventTypes: ["ari.updated"],
    });
    expect(eleventh.status).toBe(409);
    const listed = await panelConnect.listPartnerCallbacks(
      { clientId: partner.clientId },
      { headers: bearer(manager.accessToken) },
    );
    expect(listed.callbacks.map((c) => c.id)).toEqual(made);
    // the hotel's own list does not show them
    expect((await call("GET", "/api/panel/v1/webhook-endpoints", manager.accessToken)).body.endpoints ?? []).toEqual(
      [],
    );
    for (const id of made)
      expect((await call("DELETE", `/api/panel/v1/partner-callbacks/${id}`, manager.accessToken)).status).toBe(204);
    expect((await call("DELETE", `/api/panel/v1/partner-callbacks/${made[0]}`, manager.accessToken)).status).toBe(404);
  });
});

describe("outcomes and bookings", () => {
  it("partner_message.processed carries the reservation, .rejected the reason; reservation.created follows in the partner's codes; signed", async () => {
    const cb = await addCallback("/outcomes", [
      "partner_message.processed",
      "partner_message.rejected",
      "reservation.created",
    ]);
    // the hotel's own address on the same property gets the same booking in the hotel's codes
    await app.parts.service.create(
      { propertyId: property.id, userId: manager.userId },
      { url: receiver.url("/hotel"), eventTypes: ["reservation.created"] },
    );
    const send = (body: object) =>
      call("POST", `/api/v1/properties/${property.code}/reservation-events`, partner.accessToken, body);
    const sent = await send({
      eventType: "NEW",
      externalReference: "CB-BK-1",
      arrivalDate: "2027-06-01",
      departureDate: "2027-06-03",
      currency: "TRY",
      holder: { name: "Channel Guest" },
      channel: "Booking.com",
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 50000 }],
      totalMinor: 50000,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(300);
    const rejected = await send({ eventType: "CANCELLED", externalReference: "CB-NEVER" });
    expect(rejected.status).toBeLessThan(300);
    const [processed] = await bodies("/outcomes", 1, (b) => b.type === "partner_message.processed");
    expect(processed!.b.data).toMatchObject({
      messageId: sent.body.eventId,
      messageType: "NEW",
      externalReference: "CB-BK-1",
      status: "PROCESSED",
      reservationCode: expect.any(String),
      reservationId: expect.any(String),
    });
    expect(processed!.b.property).toEqual({ code: property.code });
    expect(verify(processed!.r, cb.secret)).toBe(true);
    const [rej] = await bodies("/outcomes", 1, (b) => b.type === "partner_message.rejected");
    expect(rej!.b.data).toMatchObject({
      messageId: rejected.body.eventId,
      status: "REJECTED",
      reason: { code: "unknown_reservation", text: expect.stringContaining("CB-NEVER") },
    });
    const [created] = await bodies("/outcomes", 1, (b) => b.type === "reservation.created");
    expect(created!.b.data.id).toBe(processed!.b.data.reservationId);
    expect(created!.b.data.roomTypes).toEqual(["X-DBL"]);
    expect(verify(created!.r, cb.secret)).toBe(true);
    const [hotel] = await bodies("/hotel", 1, (b) => b.type === "reservation.created");
    expect(hotel!.b.id).toBe(created!.b.id);
    expect(hotel!.b.data.roomTypes).toEqual(["DBL"]);
  });
});

describe("ari.updated", () => {
  let cb: { id: string; secret: string };
  const pushes = (pick: (b: Json) => boolean = () => true) =>
    receiver.received
      .filter((r) => r.path === "/ari")
      .map((r) => JSON.parse(r.body) as Json)
      .filter((b) => b.type === "ari.updated" && pick(b));

  beforeAll(async () => {
    cb = await addCallback("/ari", ["ari.updated"]);
  });

  it("a partner write is pushed with the new values in the partner's codes, numbered with the feed's sequence", async () => {
    const w = await ariWrite([
      {
        roomTypeCode: "X-DBL",
        ratePlanCode: "X-BAR",
        from: "2027-03-01",
        to: "2027-03-03",
        priceMinor: 31000,
        minStay: 2,
      },
    ]);
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const [push] = await bodies(
      "/ari",
      1,
      (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2027-03-01"),
    );
    const d = push!.b.data;
    // a change still settling from an earlier test (the channel booking's nights) may ride in the same push
    expect(d.cells.filter((c: Json) => c.date < "2027-04-01")).toEqual([
      expect.objectContaining({
        roomTypeCode: "X-DBL",
        ratePlanCode: "X-BAR",
        date: "2027-03-01",
        priceMinor: "31000",
        minStay: 2,
        available: 3,
      }),
      expect.objectContaining({
        roomTypeCode: "X-DBL",
        ratePlanCode: "X-BAR",
        date: "2027-03-02",
        priceMinor: "31000",
        minStay: 2,
      }),
    ]);
    expect(d).toMatchObject({ part: 1, parts: 1, currency: expect.any(String), amountScale: expect.any(Number) });
    // numbered with the feed: at least the write's own change, at most the feed's head now
    const { rows } = await app.db.pool.query<{ write: string; head: string }>(
      `select max(seq) filter (where from_date = '2027-03-01' and to_date = '2027-03-03')::text as write,
              max(seq)::text as head
       from ari_changes where property_id = $1`,
      [property.id],
    );
    expect(BigInt(d.seq)).toBeGreaterThanOrEqual(BigInt(rows[0]!.write));
    expect(BigInt(d.seq)).toBeLessThanOrEqual(BigInt(rows[0]!.head));
    expect(verify(push!.r, cb.secret)).toBe(true);
  });

  it("a staff write is pushed too (our code where the partner has no mapping)", async () => {
    await app.services.inventory.setPrices(property.id, {
      ratePlanId: ids.nrf,
      roomTypeId: ids.dbl,
      from: "2027-04-10",
      to: "2027-04-11",
      amountMinor: 19900n,
    });
    const [push] = await bodies(
      "/ari",
      1,
      (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2027-04-10"),
    );
    expect(push!.b.data.cells).toEqual([
      expect.objectContaining({ roomTypeCode: "X-DBL", ratePlanCode: "NRF", date: "2027-04-10", priceMinor: "19900" }),
    ]);
  });

  it("a rate plan priced by occupancy is pushed with its prices per adults", async () => {
    await app.services.inventory.setRatePlanOccupancyPricing(property.id, ids.nrf, true);
    try {
      const w = await ariWrite([
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "NRF",
          from: "2027-04-20",
          to: "2027-04-21",
          occupancyPrices: [
            { adults: 1, priceMinor: 15000 },
            { adults: 2, priceMinor: 18000 },
          ],
        },
      ]);
      expect(w.status, JSON.stringify(w.body)).toBe(200);
      const [push] = await bodies(
        "/ari",
        1,
        (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2027-04-20"),
      );
      expect(push!.b.data.cells).toEqual([
        expect.objectContaining({
          ratePlanCode: "NRF",
          date: "2027-04-20",
          priceMinor: "18000",
          occupancyPrices: [
            { adults: 1, priceMinor: "15000" },
            { adults: 2, priceMinor: "18000" },
          ],
        }),
      ]);
    } finally {
      await app.services.inventory.setRatePlanOccupancyPricing(property.id, ids.nrf, false);
    }
  });

  it("a burst within the window becomes one message with the last values", async () => {
    const before = pushes().length;
    // eight changes, each its own transaction and feed entry, committed together (well inside the 1 s window)
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        app.services.inventory.setPrices(property.id, {
          ratePlanId: ids.bar,
          roomTypeId: ids.dbl,
          from: "2027-05-01",
          to: "2027-05-02",
          amountMinor: BigInt(40000 + i),
        }),
      ),
    );
    const spread = performance.now() - t0;
    const [push] = await bodies(
      "/ari",
      1,
      (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2027-05-01"),
    );
    // wait past another window: nothing else comes for the burst
    await new Promise((r) => setTimeout(r, 1_500));
    const burst = pushes((b) => b.data.cells.some((c: Json) => c.date === "2027-05-01"));
    expect(burst, `writes took ${spread.toFixed(0)} ms`).toHaveLength(1);
    expect(pushes().length - before).toBe(1);
    expect(BigInt(push!.b.data.seq) - BigInt(push!.b.data.fromSeq)).toBe(7n);
    // the values are the last committed ones
    const read = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari?from=2027-05-01&to=2027-05-02&roomTypes=X-DBL&ratePlans=X-BAR`,
      partner.accessToken,
    );
    const last = read.body.roomTypes[0].ratePlans[0].days[0].priceMinor;
    expect(push!.b.data.cells).toEqual([expect.objectContaining({ date: "2027-05-01", priceMinor: String(last) })]);
  });

  it(`a push larger than ${ariPushCellsPerMessage} cells is split in order`, async () => {
    // DBL x BAR and DBL x NRF over 300 days: 600 cells
    const w = await ariWrite([
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2027-07-01", to: "2028-04-26", stopSell: true },
      { roomTypeCode: "X-DBL", ratePlanCode: "NRF", from: "2027-07-01", to: "2028-04-26", stopSell: true },
    ]);
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const parts = await bodies("/ari", 2, (b) => b.type === "ari.updated" && b.data.parts === 2);
    const [a, b] = parts.map((p) => p.b.data).sort((x, y) => x.part - y.part);
    expect(a.seq).toBe(b.seq);
    expect(a.cells).toHaveLength(ariPushCellsPerMessage);
    expect(b.cells).toHaveLength(600 - ariPushCellsPerMessage);
    const all = [...a.cells, ...b.cells];
    expect(all.every((c: Json) => c.stopSell === true)).toBe(true);
    const keys = all.map((c: Json) => `${c.ratePlanCode}|${c.date}`);
    expect(keys[0]).toBe("NRF|2027-07-01");
    expect(keys.at(-1)).toBe("X-BAR|2028-04-25");
    expect(new Set(keys).size).toBe(600);
  });

  it("a lost push is recovered from the pull feed with the cursor of the push before it", async () => {
    const w1 = await ariWrite([
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2028-05-10", to: "2028-05-11", priceMinor: 51000 },
    ]);
    expect(w1.status).toBe(200);
    const [first] = await bodies(
      "/ari",
      1,
      (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2028-05-10"),
    );
    // the receiver loses the next push (answers 500; the retry is half a minute away)
    failPaths.add("/ari|ari.updated");
    const w2 = await ariWrite([
      { roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", from: "2028-05-15", to: "2028-05-16", closedToArrival: true },
    ]);
    expect(w2.status).toBe(200);
    const [lost] = await bodies(
      "/ari",
      1,
      (b) => b.type === "ari.updated" && b.data.cells.some((c: Json) => c.date === "2028-05-15"),
    );
    failPaths.delete("/ari|ari.updated");
    expect(BigInt(lost!.b.data.seq)).toBeGreaterThan(BigInt(first!.b.data.seq));
    // the partner resumes from the feed with the last push it has
    const feed = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari/changes?cursor=${first!.b.data.cursor}`,
      partner.accessToken,
    );
    expect(feed.status).toBe(200);
    expect(feed.body.data.map((c: Json) => c.seq)).toContain(lost!.b.data.seq);
    const missed = feed.body.data.find((c: Json) => c.seq === lost!.b.data.seq);
    expect(missed).toMatchObject({ from: "2028-05-15", to: "2028-05-16", reason: "restriction" });
    expect(feed.body.nextCursor).toBe(lost!.b.data.cursor);
    const read = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari?from=${missed.from}&to=${missed.to}&roomTypes=X-DBL&ratePlans=X-BAR`,
      partner.accessToken,
    );
    expect(read.body.roomTypes[0].ratePlans[0].days[0]).toMatchObject({ date: "2028-05-15", closedToArrival: true });
    // and the pushed cursor is the feed's: after it, nothing earlier comes back
    const after = await call(
      "GET",
      `/api/v1/properties/${property.code}/ari/changes?cursor=${lost!.b.data.cursor}`,
      partner.accessToken,
    );
    expect(after.body.data.every((c: Json) => BigInt(c.seq) > BigInt(lost!.b.data.seq))).toBe(true);
  });
});

describe("the partner's delivery history (ListCallbackDeliveries)", () => {
  it("lists the client's own attempts on REST, Connect and gRPC, in cursor pages; others see none", async () => {
    const rest = await call("GET", "/api/v1/callbacks/deliveries?limit=2", partner.accessToken);
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.hasMore).toBe(true);
    expect(rest.body.data[0]).toMatchObject({
      eventType: expect.any(String),
      attempt: 1,
      url: expect.stringContaining("receiver.test"),
    });
    const next = await call(
      "GET",
      `/api/v1/callbacks/deliveries?limit=2&cursor=${rest.body.nextCursor}`,
      partner.accessToken,
    );
    expect(next.body.data[0].id).not.toBe(rest.body.data[0].id);
    const failed = await call(
      "GET",
      "/api/v1/callbacks/deliveries?eventType=ari.updated&limit=200",
      partner.accessToken,
    );
    expect(failed.body.data.some((a: Json) => a.httpStatus === 500 && a.errorClass === "http_status")).toBe(true);
    for (const c of [connect, grpc]) {
      const page = await c.listCallbackDeliveries({ limit: 2 }, { headers: bearer(partner.accessToken) });
      expect(page.data.map((a) => a.id)).toEqual(rest.body.data.map((a: Json) => a.id));
      const none = await c.listCallbackDeliveries({}, { headers: bearer(stranger.accessToken) });
      expect(none.data).toEqual([]);
      for (const bad of [{ limit: 201 }, { cursor: "nope" }, { eventType: "folio.payment_posted" }]) {
        const err = await c.listCallbackDeliveries(bad, { headers: bearer(partner.accessToken) }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ConnectError);
        expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      }
    }
    for (const q of ["limit=201", "limit=-1", "cursor=nope", "eventType=nope"]) {
      const r = await call("GET", `/api/v1/callbacks/deliveries?${q}`, partner.accessToken);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe("invalid_argument");
    }
    expect((await call("GET", "/api/v1/callbacks/deliveries", manager.accessToken)).status).toBe(403);
  });
});
