import { randomUUID } from "node:crypto";
import { Agent, get as httpGet } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { systemClock } from "../../src/lib/clock.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { seedDemo } from "../../src/ops/seed.ts";
import { bearer, createStaffSession, createTestClient } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type WebhookApp,
} from "../helpers/webhooks.ts";

// The channel-manager certification checklist (docs/partners/certification.md), end to end on the demo hotel in
// the partner's own codes: ARI written over REST, Connect and gRPC, read back through the ARI read, availability
// and the feeds, bookings sent as reservation events, and every outcome, booking and ARI push received by the
// partner's callback address on a loopback HTTPS receiver, on the real clock (pusher coalescing window 1 s).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

const P = "DEMO-IST";
const roomTypes = ["SGL", "DBL", "TWN", "STE"] as const;
const ratePlans = ["RO", "BB"] as const;
const cm = (code: string) => `CM-${code}`;
/** The date `n` days after today (UTC; the demo's business date is today in Istanbul, at most a day later). */
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const syncFrom = 2;
const syncDays = 500;
/** The full sync's price of a room type x rate plan (minor units). */
const syncPrice = (rt: string, rp: string) =>
  100_000 + roomTypes.indexOf(rt as never) * 10_000 + (rp === "BB" ? 4_000 : 0);

let app: WebhookApp;
let receiver: Receiver;
let token: string;
let grpc: Client<typeof ConnectivityService>;
let connect: Client<typeof ConnectivityService>;
let lose = false;
let managerToken: string;

beforeAll(async () => {
  const ca = createTestCa();
  receiver = await startReceiver(ca);
  receiver.behave((_req, res, body) => {
    res.writeHead(lose && (JSON.parse(body) as Json).type === "ari.updated" ? 500 : 204);
    res.end();
  });
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
  await seedDemo(app.deps, app.services.admin);
  for (const code of roomTypes)
    await setProviderMapping(app.db.pool, {
      propertyCode: P,
      provider: "cm",
      kind: "room_type",
      code,
      externalCode: cm(code),
    });
  for (const code of ratePlans)
    await setProviderMapping(app.db.pool, {
      propertyCode: P,
      provider: "cm",
      kind: "rate_plan",
      code,
      externalCode: cm(code),
    });
  const partner = await createTestClient(app, {
    provider: "cm",
    propertyCodes: [P],
    scopes: [
      "availability.read",
      "reservations.read",
      "mappings.read",
      "reservations.write",
      "ari.read",
      "ari.write",
      "allotment.write",
    ],
    approved: true,
  });
  token = partner.accessToken;
  const manager = await createStaffSession(app, { propertyCode: P, role: "manager" });
  managerToken = manager.accessToken;
  const callback = await call("POST", "/api/panel/v1/partner-callbacks", {
    token: manager.accessToken,
    body: {
      clientId: partner.clientId,
      url: receiver.url("/cm"),
      eventTypes: [
        "partner_message.processed",
        "partner_message.rejected",
        "reservation.created",
        "reservation.updated",
        "reservation.cancelled",
        "ari.updated",
      ],
    },
  });
  expect(callback.status, JSON.stringify(callback.body)).toBe(201);
  grpc = createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl }));
  connect = createClient(ConnectivityService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
}, 60_000);
afterAll(async () => {
  agent.destroy();
  await app?.close();
  await receiver?.close();
});

/** A GET on the wire without the test's OpenAPI check (for timing the service alone). */
function get(path: string): Promise<Json> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${app.baseUrl}${path}`, { headers: bearer(token), agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        res.statusCode === 200
          ? resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
          : reject(new Error(`${path}: ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
  });
}
const agent = new Agent({ keepAlive: true });

async function call(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: {
      ...bearer(opts.token ?? token),
      ...(opts.body !== undefined ? { "content-type": "application/json", "idempotency-key": randomUUID() } : {}),
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as Json };
}

const writeAri = async (changes: unknown[]) => {
  const res = await call("POST", `/api/v1/properties/${P}/ari`, { body: { changes } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** The ARI read of one room type x rate plan (the partner's codes) over [from, to), day by day. */
async function ariDays(rt: string, rp: string, from: string, to: string): Promise<Json[]> {
  const res = await call("GET", `/api/v1/properties/${P}/ari?from=${from}&to=${to}&roomTypes=${rt}&ratePlans=${rp}`);
  expect(res.status).toBe(200);
  return res.body.roomTypes[0].ratePlans[0].days;
}

async function availability(rt: string, from: string, to: string): Promise<Json[]> {
  const res = await call("GET", `/api/v1/properties/${P}/availability?from=${from}&to=${to}&roomTypes=${rt}`);
  expect(res.status).toBe(200);
  return res.body.roomTypes[0].days;
}

/** What the callback address received, parsed. */
const callbacks = (): Json[] => receiver.received.filter((r) => r.path === "/cm").map((r) => JSON.parse(r.body));

async function waitFor<T>(what: string, find: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The newest pushed cell of a room type x rate plan x date (partner codes) satisfying `pick`. */
const pushedCell = (rt: string, rp: string, date: string, pick: (c: Json) => boolean) =>
  waitFor(`ari.updated cell ${rt}/${rp}/${date}`, () =>
    callbacks()
      .filter((b) => b.type === "ari.updated")
      .flatMap((b) => b.data.cells.map((c: Json) => ({ ...c, seq: b.data.seq })))
      .filter((c) => c.roomTypeCode === rt && c.ratePlanCode === rp && c.date === date && pick(c))
      .at(-1),
  );

async function feedAfter(cursor: string): Promise<{ items: Json[]; next: string }> {
  const res = await call("GET", `/api/v1/properties/${P}/ari/changes?cursor=${cursor}&limit=500`);
  expect(res.status).toBe(200);
  return { items: res.body.data, next: res.body.nextCursor };
}

async function feedHead(): Promise<string> {
  let res = await call("GET", `/api/v1/properties/${P}/ari/changes?limit=500`);
  while (res.body.hasMore)
    res = await call("GET", `/api/v1/properties/${P}/ari/changes?limit=500&cursor=${res.body.nextCursor}`);
  return res.body.nextCursor;
}

describe("channel-manager certification on the demo hotel, in the partner's codes", () => {
  it("full sync: 500 days of rates and restrictions for every room type and rate plan in one call, read back in pages under 2 s and pushed", async () => {
    const changes = roomTypes.flatMap((rt) =>
      ratePlans.map((rp) => ({
        roomTypeCode: cm(rt),
        ratePlanCode: cm(rp),
        from: day(syncFrom),
        to: day(syncFrom + syncDays),
        priceMinor: syncPrice(rt, rp),
        minStay: 1,
        maxStay: 0,
        closedToArrival: false,
        closedToDeparture: false,
        stopSell: false,
      })),
    );
    expect(await writeAri(changes)).toEqual({ propertyCode: P, changes: 8, cells: 8 * syncDays });

    // pushed to the callback address in parts of at most 500 cells, in order
    const last = await pushedCell("CM-TWN", "CM-RO", day(syncFrom + syncDays - 1), () => true);
    const parts = await waitFor("every part of the full sync push", () => {
      const ps = callbacks().filter((b) => b.type === "ari.updated" && b.data.seq === last.seq);
      return ps.length > 0 && ps.length === ps[0].data.parts ? ps : undefined;
    });
    const pushed = parts.sort((a, b) => a.data.part - b.data.part).flatMap((p) => p.data.cells);
    expect(pushed).toHaveLength(roomTypes.length * ratePlans.length * syncDays);
    expect(parts.every((p) => p.data.cells.length <= 500)).toBe(true);
    expect(
      pushed.every((c: Json) => c.priceMinor === String(syncPrice(c.roomTypeCode.slice(3), c.ratePlanCode.slice(3)))),
    ).toBe(true);
    // read back as a partner syncs: at most 366 days a read, each in pages (nextCursor while hasMore), timed on the
    // wire (the test's own OpenAPI check of each answer is not the service's time; one page is checked below)
    const started = performance.now();
    const cells: Json[] = [];
    for (const [from, to] of [
      [day(syncFrom), day(syncFrom + 366)],
      [day(syncFrom + 366), day(syncFrom + syncDays)],
    ]) {
      let cursor = "";
      for (;;) {
        const page = await get(`/api/v1/properties/${P}/ari?from=${from}&to=${to}${cursor && `&cursor=${cursor}`}`);
        for (const rt of page.roomTypes)
          for (const rp of rt.ratePlans)
            for (const d of rp.days) cells.push({ rt: rt.externalCode, rp: rp.externalCode, ...d });
        if (!page.hasMore) break;
        cursor = page.nextCursor;
      }
    }
    const availabilityReads = [
      await get(`/api/v1/properties/${P}/availability?from=${day(syncFrom)}&to=${day(syncFrom + 366)}`),
      await get(`/api/v1/properties/${P}/availability?from=${day(syncFrom + 366)}&to=${day(syncFrom + syncDays)}`),
    ];
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(2_000);
    expect(cells).toHaveLength(roomTypes.length * ratePlans.length * syncDays);
    for (const c of cells) {
      const [rt, rp] = [c.rt.slice(3), c.rp.slice(3)];
      expect(c).toMatchObject({
        priceMinor: syncPrice(rt, rp),
        minStay: 1,
        maxStay: null,
        closedToArrival: false,
        closedToDeparture: false,
        stopSell: false,
      });
      expect(c.available).toBeGreaterThan(0);
    }
    const availableDays = availabilityReads.flatMap((r) => r.roomTypes.flatMap((t: Json) => t.days));
    expect(availableDays).toHaveLength(roomTypes.length * syncDays);
    const checked = await call(
      "GET",
      `/api/v1/properties/${P}/ari?from=${day(syncFrom + 366)}&to=${day(syncFrom + syncDays)}`,
    );
    expect(checked.body.roomTypes.map((t: Json) => t.externalCode)).toEqual(["CM-DBL", "CM-SGL", "CM-STE", "CM-TWN"]);

    // the same grid over gRPC
    const grid = await grpc.getAri(
      { propertyCode: P, from: day(syncFrom), to: day(syncFrom + 366) },
      { headers: bearer(token) },
    );
    const dblBb = grid.roomTypes
      .find((t) => t.externalCode === "CM-DBL")!
      .ratePlans.find((p) => p.externalCode === "CM-BB")!;
    expect(dblBb.days.every((d) => d.priceMinor === BigInt(syncPrice("DBL", "BB")))).toBe(true);
  });

  it("single-date price change (REST): that day alone changes, in the read, the feed and the push", async () => {
    const cursor = await feedHead();
    await writeAri([
      { roomTypeCode: "CM-DBL", ratePlanCode: "CM-BB", from: day(10), to: day(11), priceMinor: 333_300 },
    ]);
    const days = await ariDays("CM-DBL", "CM-BB", day(9), day(12));
    const sync = syncPrice("DBL", "BB");
    expect(days.map((d) => d.priceMinor)).toEqual([sync, 333_300, sync]);
    const { items } = await feedAfter(cursor);
    expect(items).toEqual([
      expect.objectContaining({
        reason: "rate",
        from: day(10),
        to: day(11),
        roomTypes: [{ code: "DBL", externalCode: "CM-DBL" }],
        ratePlans: [{ code: "BB", externalCode: "CM-BB" }],
      }),
    ]);
    const cell = await pushedCell("CM-DBL", "CM-BB", day(10), (c) => c.priceMinor === "333300");
    expect(cell.seq).toBe(items[0].seq);
  });

  it("range price change (gRPC UpdateAri, weekdays): only the range's chosen weekdays change", async () => {
    const res = await grpc.updateAri(
      {
        propertyCode: P,
        changes: [
          {
            roomTypeCode: "CM-TWN",
            ratePlanCode: "CM-RO",
            from: day(14),
            to: day(28),
            weekdays: [6, 7],
            priceMinor: 299_000n,
          },
        ],
      },
      { headers: { ...bearer(token), "idempotency-key": randomUUID() } },
    );
    expect(res.cells).toBe(4);
    const days = await ariDays("CM-TWN", "CM-RO", day(14), day(28));
    for (const d of days) {
      const weekday = new Date(`${d.date}T00:00:00Z`).getUTCDay();
      expect(d.priceMinor).toBe(weekday === 0 || weekday === 6 ? 299_000 : syncPrice("TWN", "RO"));
    }
    const weekend = days.find((d) => d.priceMinor === 299_000).date;
    await pushedCell("CM-TWN", "CM-RO", weekend, (c) => c.priceMinor === "299000");
  });

  it("min stay (Connect UpdateAri): the read and the push show it; a stay limit of 0 removes it again", async () => {
    const write = (minStay: number) =>
      connect.updateAri(
        {
          propertyCode: P,
          changes: [{ roomTypeCode: "CM-DBL", ratePlanCode: "CM-RO", from: day(30), to: day(33), minStay }],
        },
        { headers: { ...bearer(token), "idempotency-key": randomUUID() } },
      );
    await write(3);
    expect((await ariDays("CM-DBL", "CM-RO", day(30), day(33))).map((d) => d.minStay)).toEqual([3, 3, 3]);
    await pushedCell("CM-DBL", "CM-RO", day(31), (c) => c.minStay === 3);
    const read = await connect.getAri(
      { propertyCode: P, from: day(30), to: day(31), roomTypes: ["CM-DBL"], ratePlans: ["CM-RO"] },
      { headers: bearer(token) },
    );
    expect(read.roomTypes[0]!.ratePlans[0]!.days[0]!.minStay).toBe(3);
    await write(0);
    expect((await ariDays("CM-DBL", "CM-RO", day(30), day(33))).map((d) => d.minStay)).toEqual([null, null, null]);
  });

  it("stop sell: the read and the push show it; availability is untouched; lifting it sells again", async () => {
    await writeAri([{ roomTypeCode: "CM-STE", ratePlanCode: "CM-BB", from: day(40), to: day(42), stopSell: true }]);
    expect((await ariDays("CM-STE", "CM-BB", day(39), day(43))).map((d) => d.stopSell)).toEqual([
      false,
      true,
      true,
      false,
    ]);
    expect((await ariDays("CM-STE", "CM-RO", day(40), day(42))).map((d) => d.stopSell)).toEqual([false, false]);
    await pushedCell("CM-STE", "CM-BB", day(41), (c) => c.stopSell === true);
    expect((await availability("CM-STE", day(40), day(42))).map((d) => d.available)).toEqual([4, 4]);
    await writeAri([{ roomTypeCode: "CM-STE", ratePlanCode: "CM-BB", from: day(41), to: day(42), stopSell: false }]);
    expect((await ariDays("CM-STE", "CM-BB", day(40), day(42))).map((d) => d.stopSell)).toEqual([true, false]);
    await pushedCell("CM-STE", "CM-BB", day(41), (c) => c.stopSell === false);
  });

  it("closed to arrival and closed to departure, each on its own day", async () => {
    await writeAri([
      { roomTypeCode: "CM-SGL", ratePlanCode: "CM-BB", from: day(50), to: day(51), closedToArrival: true },
      { roomTypeCode: "CM-SGL", ratePlanCode: "CM-BB", from: day(52), to: day(53), closedToDeparture: true },
    ]);
    const days = await ariDays("CM-SGL", "CM-BB", day(50), day(53));
    expect(days.map((d) => [d.closedToArrival, d.closedToDeparture])).toEqual([
      [true, false],
      [false, false],
      [false, true],
    ]);
    await pushedCell("CM-SGL", "CM-BB", day(50), (c) => c.closedToArrival === true);
    await pushedCell("CM-SGL", "CM-BB", day(52), (c) => c.closedToDeparture === true);
  });

  it("several changes in one call: all applied and pushed together; one bad change refuses the whole call", async () => {
    const cursor = await feedHead();
    const changes = [
      { roomTypeCode: "CM-SGL", ratePlanCode: "CM-RO", from: day(60), to: day(62), priceMinor: 120_000 },
      { roomTypeCode: "CM-DBL", ratePlanCode: "CM-RO", from: day(60), to: day(62), minStay: 2, maxStay: 7 },
      { roomTypeCode: "CM-TWN", ratePlanCode: "CM-BB", from: day(61), to: day(62), stopSell: true },
      {
        roomTypeCode: "CM-STE",
        ratePlanCode: "CM-RO",
        from: day(60),
        to: day(61),
        closedToArrival: true,
        priceMinor: 650_000,
      },
    ];
    expect(await writeAri(changes)).toMatchObject({ changes: 4, cells: 6 });
    expect((await ariDays("CM-SGL", "CM-RO", day(60), day(62))).map((d) => d.priceMinor)).toEqual([120_000, 120_000]);
    expect((await ariDays("CM-DBL", "CM-RO", day(60), day(62))).map((d) => [d.minStay, d.maxStay])).toEqual([
      [2, 7],
      [2, 7],
    ]);
    expect((await ariDays("CM-TWN", "CM-BB", day(61), day(62)))[0].stopSell).toBe(true);
    expect((await ariDays("CM-STE", "CM-RO", day(60), day(61)))[0]).toMatchObject({
      priceMinor: 650_000,
      closedToArrival: true,
    });
    const { items } = await feedAfter(cursor);
    expect(items.map((i) => i.reason).sort()).toEqual(["rate", "restriction"]);
    const cell = await pushedCell(
      "CM-STE",
      "CM-RO",
      day(60),
      (c) => c.closedToArrival === true && c.priceMinor === "650000",
    );
    const push = callbacks().find((b) => b.type === "ari.updated" && b.data.seq === cell.seq);
    // one push (coalesced) carries the four changes' cells
    expect(push.data.cells.filter((c: Json) => c.date === day(60) || c.date === day(61)).length).toBeGreaterThanOrEqual(
      6,
    );

    const bad = await call("POST", `/api/v1/properties/${P}/ari`, {
      body: {
        changes: [
          { roomTypeCode: "CM-SGL", ratePlanCode: "CM-RO", from: day(63), to: day(64), priceMinor: 1 },
          { roomTypeCode: "CM-SGL", ratePlanCode: "CM-RO", from: day(64), to: day(63), priceMinor: 2 },
        ],
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: Json) => d.field)).toContain("changes[1].to");
    expect((await ariDays("CM-SGL", "CM-RO", day(63), day(64)))[0].priceMinor).toBe(syncPrice("SGL", "RO"));
  });

  it("availability cap (allotment): availability, the ARI read of every rate plan and the push show the capped rooms", async () => {
    const [free] = await availability("CM-TWN", day(100), day(101));
    expect(free.available).toBeGreaterThan(1);
    await writeAri([
      { roomTypeCode: "CM-TWN", ratePlanCode: "CM-RO", from: day(100), to: day(101), availabilityCap: 1 },
    ]);
    expect(await availability("CM-TWN", day(100), day(101))).toMatchObject([{ available: 1, availabilityCap: 1 }]);
    let capped = 0n;
    for (const rp of ["CM-RO", "CM-BB"]) {
      expect((await ariDays("CM-TWN", rp, day(100), day(101)))[0].available).toBe(1);
      capped = BigInt((await pushedCell("CM-TWN", rp, day(100), (c) => c.available === 1)).seq);
    }
    await writeAri([
      { roomTypeCode: "CM-TWN", ratePlanCode: "CM-BB", from: day(100), to: day(101), availabilityCap: -1 },
    ]);
    expect(await availability("CM-TWN", day(100), day(101))).toMatchObject([
      { available: free.available, availabilityCap: null },
    ]);
    // pushed again after the cap's push, with the free rooms
    await pushedCell("CM-TWN", "CM-RO", day(100), (c) => c.available === free.available && BigInt(c.seq) > capped);
  });

  it("bookings new (REST), modified (Connect) and cancelled (gRPC): outcomes, reservation callbacks, feeds and availability", async () => {
    const ref = "CM-CERT-1";
    const [arrival, departure, later] = [day(70), day(72), day(73)];
    const before = (await availability("CM-DBL", arrival, later)).map((d) => d.available);
    const sent = await call("POST", `/api/v1/properties/${P}/reservation-events`, {
      body: {
        eventType: "NEW",
        externalReference: ref,
        channel: "Booking.com",
        arrivalDate: arrival,
        departureDate: departure,
        currency: "TRY",
        holder: { name: "Guest Name" },
        rooms: [{ roomTypeCode: "CM-DBL", ratePlanCode: "CM-BB", adults: 2, children: 0, amountMinor: 288_000 }],
        totalMinor: 288_000,
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const processed = await waitFor("partner_message.processed", () =>
      callbacks().find((b) => b.type === "partner_message.processed" && b.data.messageId === sent.body.eventId),
    );
    const { reservationId, reservationCode } = processed.data;
    const created = await waitFor("reservation.created", () =>
      callbacks().find((b) => b.type === "reservation.created" && b.data.id === reservationId),
    );
    expect(created.data).toMatchObject({
      code: reservationCode,
      externalReference: ref,
      source: "CHANNEL",
      roomTypes: ["CM-DBL"],
    });
    expect((await availability("CM-DBL", arrival, later)).map((d) => d.available)).toEqual([
      before[0] - 1,
      before[1] - 1,
      before[2],
    ]);
    await pushedCell("CM-DBL", "CM-BB", arrival, (c) => c.available === before[0] - 1);
    const feed = await call("GET", `/api/v1/properties/${P}/reservations?limit=500`);
    expect(feed.body.data.find((r: Json) => r.id === reservationId)).toMatchObject({
      status: "GUARANTEED",
      roomTypeCodes: [{ code: "DBL", externalCode: "CM-DBL" }],
    });

    const modified = await connect.createReservationEvent(
      {
        propertyCode: P,
        eventType: "MODIFIED",
        externalReference: ref,
        channel: "Booking.com",
        arrivalDate: arrival,
        departureDate: later,
        currency: "TRY",
        holder: { name: "Guest Name" },
        rooms: [{ roomTypeCode: "CM-DBL", ratePlanCode: "CM-BB", adults: 2, children: 0, amountMinor: 432_000n }],
        totalMinor: 432_000n,
      },
      { headers: { ...bearer(token), "idempotency-key": randomUUID() } },
    );
    await waitFor("partner_message.processed of the modification", () =>
      callbacks().find((b) => b.type === "partner_message.processed" && b.data.messageId === modified.eventId),
    );
    const updated = await waitFor("reservation.updated", () =>
      callbacks().find(
        (b) => b.type === "reservation.updated" && b.data.id === reservationId && b.data.departureDate === later,
      ),
    );
    expect(updated.data).toMatchObject({ arrivalDate: arrival, roomTypes: ["CM-DBL"] });
    expect((await availability("CM-DBL", arrival, later)).map((d) => d.available)).toEqual(before.map((n) => n - 1));

    const cancelled = await grpc.createReservationEvent(
      { propertyCode: P, eventType: "CANCELLED", externalReference: ref, channel: "Booking.com" },
      { headers: { ...bearer(token), "idempotency-key": randomUUID() } },
    );
    await waitFor("partner_message.processed of the cancellation", () =>
      callbacks().find((b) => b.type === "partner_message.processed" && b.data.messageId === cancelled.eventId),
    );
    const gone = await waitFor("reservation.cancelled", () =>
      callbacks().find((b) => b.type === "reservation.cancelled" && b.data.id === reservationId),
    );
    expect(gone.data).toMatchObject({ status: "CANCELLED", roomTypes: ["CM-DBL"] });
    expect((await availability("CM-DBL", arrival, later)).map((d) => d.available)).toEqual(before);
    await pushedCell("CM-DBL", "CM-BB", day(72), (c) => c.available === before[2]);
    const feedAfterCancel = await grpc.listReservations({ propertyCode: P }, { headers: bearer(token) });
    expect(feedAfterCancel.data.find((r) => r.id === reservationId)?.status).toBe("CANCELLED");

    // a change of a booking we do not have is rejected with its reason
    const unknown = await call("POST", `/api/v1/properties/${P}/reservation-events`, {
      body: { eventType: "CANCELLED", externalReference: "CM-NEVER" },
    });
    const rejected = await waitFor("partner_message.rejected", () =>
      callbacks().find((b) => b.type === "partner_message.rejected" && b.data.messageId === unknown.body.eventId),
    );
    expect(rejected.data.reason.code).toBe("unknown_reservation");
  });

  it("an overbooking: a channel booking beyond the rooms left is accepted and flagged", async () => {
    const [arrival, departure] = [day(80), day(81)];
    const [suites] = await availability("CM-STE", arrival, departure);
    const rooms = Array.from({ length: suites.available + 1 }, () => ({
      roomTypeCode: "CM-STE",
      ratePlanCode: "CM-RO",
      adults: 2,
      children: 0,
      amountMinor: 600_000,
    }));
    const sent = await call("POST", `/api/v1/properties/${P}/reservation-events`, {
      body: {
        eventType: "NEW",
        externalReference: "CM-CERT-OVER",
        arrivalDate: arrival,
        departureDate: departure,
        currency: "TRY",
        holder: { name: "Group Booker" },
        rooms,
        totalMinor: 600_000 * rooms.length,
      },
    });
    expect(sent.status).toBe(202);
    const processed = await waitFor("partner_message.processed of the overbooking", () =>
      callbacks().find((b) => b.type === "partner_message.processed" && b.data.messageId === sent.body.eventId),
    );
    const [after] = await availability("CM-STE", arrival, departure);
    expect(after).toMatchObject({ available: 0, overbooked: 1 });
    // staff see the reservation flagged with the night it is short
    const staff = await call("GET", `/api/mobile/v1/reservations/${processed.data.reservationId}`, {
      token: managerToken,
    });
    expect(staff.body.reservation).toMatchObject({
      overbooked: true,
      overbookedNights: [expect.objectContaining({ date: arrival })],
    });
  });

  it("a lost push is recovered from the ARI feed with the cursor of the last push received", async () => {
    await writeAri([
      { roomTypeCode: "CM-SGL", ratePlanCode: "CM-RO", from: day(90), to: day(91), priceMinor: 171_000 },
    ]);
    const kept = await pushedCell("CM-SGL", "CM-RO", day(90), (c) => c.priceMinor === "171000");
    const keptPush = callbacks().find((b) => b.type === "ari.updated" && b.data.seq === kept.seq);
    lose = true;
    try {
      await writeAri([
        { roomTypeCode: "CM-SGL", ratePlanCode: "CM-RO", from: day(95), to: day(96), closedToArrival: true },
      ]);
      await pushedCell("CM-SGL", "CM-RO", day(95), (c) => c.closedToArrival === true); // answered 500: lost
    } finally {
      lose = false;
    }
    const { items, next } = await feedAfter(keptPush.data.cursor);
    const missed = items.find((i) => i.from === day(95));
    expect(missed).toMatchObject({
      reason: "restriction",
      to: day(96),
      ratePlans: [{ code: "RO", externalCode: "CM-RO" }],
    });
    const [value] = await ariDays("CM-SGL", "CM-RO", missed.from, missed.to);
    expect(value).toMatchObject({ date: day(95), closedToArrival: true });
    expect((await feedAfter(next)).items).toEqual([]);
  });
});
