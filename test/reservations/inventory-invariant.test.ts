import fc from "fast-check";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InventoryService, RoomStatus } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import {
  ReservationService,
  ReservationSource,
  ReservationStatus,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { addDays } from "../../src/lib/dates.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { findPropertyByCode } from "../../src/modules/properties/index.ts";
import { verifyInventory } from "../../src/ops/inventory-verify.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// The inventory invariant over the real server: random sequences of every operation that moves inventory (staff
// creates with and without overbooking, changes of dates and room types, cancellations, check-in, early and late
// check-out, room moves, out-of-order periods scheduled, changed and removed, room blocks, channel bookings new,
// modified and cancelled through the partner API, and night audits that mark no-shows and move the business date),
// each answered by a 2xx or a refusal, never a 5xx. After every step, every room type and day of the hotel holds
// what its stays, blocks and periods say (inventory:verify finds no drift).

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 });

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

type Op =
  | { kind: "create"; type: number; from: number; nights: number; overbook: boolean; option: boolean }
  | { kind: "modify"; target: number; from: number; nights: number; type: number }
  | { kind: "cancel"; target: number }
  | { kind: "checkIn"; target: number; room: number; moveTo: number | null }
  | { kind: "checkOut"; target: number }
  | { kind: "move"; target: number; room: number }
  | { kind: "outOfOrder"; room: number; from: number; nights: number }
  | { kind: "changeOutOfOrder"; period: number; from: number; nights: number }
  | { kind: "removeOutOfOrder"; period: number }
  | { kind: "block"; type: number; from: number; nights: number }
  | { kind: "channel"; ref: number; from: number; nights: number; event: "NEW" | "MODIFIED" | "CANCELLED" }
  | { kind: "audit"; reinstate: boolean };

const types = ["DBL", "TWN"] as const;
const roomsPerType = 2;
// arrivals on the business date half the time, so check-ins (which open on the arrival date) happen
const offset = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 4 }));
const nights = fc.integer({ min: 1, max: 3 });
const type = fc.integer({ min: 0, max: types.length - 1 });
const room = fc.nat(types.length * roomsPerType - 1);
const target = fc.nat(12);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("create"),
      type,
      from: offset,
      nights,
      overbook: fc.boolean(),
      // a tentative option that runs out a second later: the expiry job cancels it between later steps
      option: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("modify"), target, from: offset, nights, type }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cancel"), target }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("checkIn"), target, room, moveTo: fc.option(room) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("checkOut"), target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("move"), target, room }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("outOfOrder"), room, from: offset, nights }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("changeOutOfOrder"), period: fc.nat(4), from: offset, nights }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("removeOutOfOrder"), period: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("block"), type, from: offset, nights }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("channel"),
      ref: fc.nat(3),
      from: offset,
      nights,
      event: fc.constantFrom("NEW" as const, "MODIFIED" as const, "CANCELLED" as const),
    }),
  },
  // an audit marks today's missing arrivals NO_SHOW; then perhaps one of them arrives after all
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("audit"), reinstate: fc.boolean() }) },
);

interface Hotel {
  code: string;
  token: string;
  partnerToken: string;
  /** An internal client with the admin scope: room blocks are an internal system's operation. */
  adminToken: string;
  typeIds: string[];
  ratePlanId: string;
  /** Room ids, `roomsPerType` of each type in `types` order. */
  roomIds: string[];
}

let hotels = 0;
const reinstated = { count: 0 };
const moved = { count: 0 };
async function newHotel(): Promise<Hotel> {
  const code = `INV-${++hotels}`;
  const p = await createTestProperty(app, { code, businessDate: "2027-03-01" });
  const inv = app.services.inventory;
  const typeIds: string[] = [];
  const roomIds: string[] = [];
  for (const [t, c] of types.entries()) {
    const rt = await inv.createRoomType(p.id, { code: c, name: c, maxOccupancy: 2 });
    typeIds.push(rt.id);
    for (let i = 1; i <= roomsPerType; i++)
      roomIds.push((await inv.createRoom(p.id, { number: `${t + 1}0${i}`, roomTypeId: rt.id })).id);
  }
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Bar",
    boardType: "ROOM_ONLY",
    roomTypeIds: typeIds,
  });
  for (const roomTypeId of typeIds)
    await inv.setPrices(p.id, {
      ratePlanId: bar.id,
      roomTypeId,
      from: "2027-03-01",
      to: "2027-06-01",
      amountMinor: 100n,
    });
  for (const [kind, ours, external] of [
    ["room_type", "DBL", "X-DBL"],
    ["room_type", "TWN", "X-TWN"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, {
      propertyCode: code,
      provider: "inv",
      kind,
      code: ours,
      externalCode: external,
    });
  const partner = await createTestClient(app, {
    kind: "partner",
    provider: "inv",
    propertyCodes: [code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  const admin = await createTestClient(app, { kind: "internal", propertyCodes: [code], scopes: ["admin"] });
  const manager = await createStaffSession(app, { propertyCode: code, role: "manager" });
  return {
    code,
    token: manager.accessToken,
    partnerToken: partner.accessToken,
    adminToken: admin.accessToken,
    typeIds,
    ratePlanId: bar.id,
    roomIds,
  };
}

/** A refusal (4xx-like) is an answer; a server fault is not. */
function refusedCleanly(err: unknown): void {
  if (!(err instanceof ConnectError)) throw err;
  if ([Code.Internal, Code.Unknown, Code.Unavailable, Code.DeadlineExceeded, Code.DataLoss].includes(err.code))
    throw err;
}

async function businessDate(h: Hotel): Promise<string> {
  const p = await findPropertyByCode(app.db, h.code);
  if (p === undefined) throw new Error(`no property ${h.code}`);
  return p.businessDate;
}

async function channel(h: Hotel, o: Extract<Op, { kind: "channel" }>, today: string): Promise<void> {
  const arrival = addDays(today, o.from);
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${h.code}/reservation-events`, {
    method: "POST",
    headers: { ...bearer(h.partnerToken), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify({
      eventType: o.event,
      externalReference: `REF-${o.ref}`,
      channel: "Booking.com",
      arrivalDate: arrival,
      departureDate: addDays(arrival, o.nights),
      rooms: [
        {
          roomTypeCode: o.ref % 2 === 0 ? "X-DBL" : "X-TWN",
          ratePlanCode: "X-BAR",
          adults: 2,
          children: 0,
          amountMinor: 100 * o.nights,
        },
      ],
      totalMinor: 100 * o.nights,
      currency: "TRY",
      holder: { name: "Channel Guest" },
    }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { eventId } = (await res.json()) as { eventId: string };
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${app.baseUrl}/api/v1/properties/${h.code}/reservation-events/${eventId}`, {
      headers: bearer(h.partnerToken),
    });
    expect(r.status).toBe(200);
    if (((await r.json()) as { status: string }).status !== "QUEUED") return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`partner event ${eventId} was not processed`);
}

async function run(
  h: Hotel,
  o: Op,
  reservations: Client<typeof ReservationService>,
  inventory: Client<typeof InventoryService>,
  made: string[],
  periods: string[],
  inHouse: string[],
  arrivals: Map<string, string>,
): Promise<void> {
  const headers = bearer(h.token);
  const today = await businessDate(h);
  const propertyCode = h.code;
  const pick = (i: number) => made[i % Math.max(1, made.length)];
  // check-outs and moves aim at stays checked in (a random pick is rarely one)
  const guest = (i: number) => (inHouse.length > 0 ? inHouse[i % inHouse.length] : pick(i));
  // check-ins aim at stays arriving today
  const arriving = [...arrivals].filter(([, a]) => a === today).map(([id]) => id);
  const arrival = (i: number) => (arriving.length > 0 ? arriving[i % arriving.length] : pick(i));
  const lineOf = async (id: string) =>
    (await reservations.getReservation({ propertyCode, reservationId: id }, { headers })).reservation!;
  const clean = (roomId: string) =>
    inventory.setRoomStatus({ propertyCode, roomId, status: RoomStatus.CLEAN }, { headers }).catch(refusedCleanly);
  switch (o.kind) {
    case "create": {
      const arrival = addDays(today, o.from);
      const r = await reservations.createReservation(
        {
          propertyCode,
          source: ReservationSource.DIRECT,
          holderName: "Guest",
          arrivalDate: arrival,
          departureDate: addDays(arrival, o.nights),
          rooms: [{ roomTypeId: h.typeIds[o.type]!, ratePlanId: h.ratePlanId, adults: 1, children: 0 }],
          overbook: o.overbook,
          ...(o.option ? { status: ReservationStatus.TENTATIVE, optionUntil: timestampFromMs(Date.now() + 1000) } : {}),
        },
        { headers },
      );
      made.push(r.reservation!.id);
      arrivals.set(r.reservation!.id, arrival);
      return;
    }
    case "modify": {
      const id = pick(o.target);
      if (id === undefined) return;
      const r = await lineOf(id);
      // an in-house stay keeps its arrival and its checked-in room's type: only its departure moves
      const inHouseStay = r.status === ReservationStatus.IN_HOUSE;
      const from = inHouseStay ? r.arrivalDate : addDays(today, o.from);
      await reservations.updateReservation(
        {
          propertyCode,
          reservationId: id,
          ...(inHouseStay ? {} : { arrivalDate: from }),
          departureDate: addDays(inHouseStay ? today : from, o.nights),
          ...(inHouseStay ? {} : { rooms: [{ reservationRoomId: r.rooms[0]!.id, roomTypeId: h.typeIds[o.type]! }] }),
        },
        { headers },
      );
      arrivals.set(id, from);
      return;
    }
    case "cancel": {
      const id = pick(o.target);
      if (id === undefined) return;
      await reservations.cancelReservation({ propertyCode, reservationId: id }, { headers });
      if (inHouse.includes(id)) inHouse.splice(inHouse.indexOf(id), 1);
      return;
    }
    case "checkIn": {
      const id = arrival(o.target);
      if (id === undefined) return;
      const r = await lineOf(id);
      const roomId = h.roomIds[o.room]!;
      await clean(roomId);
      await reservations.checkInRoomLine(
        { propertyCode, reservationId: id, reservationRoomId: r.rooms[0]!.id, roomId },
        { headers },
      );
      inHouse.push(id);
      // and perhaps straight on to another room (a move needs a guest in house, rare at random)
      if (o.moveTo === null) return;
      const to = h.roomIds[o.moveTo]!;
      await clean(to);
      await reservations.moveRoom(
        { propertyCode, reservationId: id, reservationRoomId: r.rooms[0]!.id, roomId: to },
        { headers },
      );
      moved.count++;
      return;
    }
    case "checkOut": {
      const id = guest(o.target);
      if (id === undefined) return;
      const r = await lineOf(id);
      await reservations.checkOutRoomLine(
        { propertyCode, reservationId: id, reservationRoomId: r.rooms[0]!.id },
        { headers },
      );
      inHouse.splice(inHouse.indexOf(id), 1);
      return;
    }
    case "move": {
      const id = guest(o.target);
      if (id === undefined) return;
      const r = await lineOf(id);
      const roomId = h.roomIds[o.room]!;
      await clean(roomId);
      await reservations.moveRoom(
        { propertyCode, reservationId: id, reservationRoomId: r.rooms[0]!.id, roomId },
        { headers },
      );
      return;
    }
    case "outOfOrder": {
      const from = addDays(today, o.from);
      const p = await inventory.createOutOfOrderPeriod(
        { propertyCode, roomId: h.roomIds[o.room]!, from, to: addDays(from, o.nights), reason: "repair" },
        { headers },
      );
      periods.push(p.outOfOrderPeriod!.id);
      return;
    }
    case "changeOutOfOrder": {
      const id = periods[o.period % Math.max(1, periods.length)];
      const from = addDays(today, o.from);
      if (id !== undefined)
        await inventory.updateOutOfOrderPeriod(
          { propertyCode, outOfOrderPeriodId: id, from, to: addDays(from, o.nights) },
          { headers },
        );
      return;
    }
    case "removeOutOfOrder": {
      const id = periods[o.period % Math.max(1, periods.length)];
      if (id !== undefined)
        await inventory.deleteOutOfOrderPeriod({ propertyCode, outOfOrderPeriodId: id }, { headers });
      return;
    }
    case "block": {
      const from = addDays(today, o.from);
      await inventory.createRoomBlock(
        { propertyCode, roomTypeId: h.typeIds[o.type]!, from, to: addDays(from, o.nights), count: 1, name: "group" },
        { headers: bearer(h.adminToken) },
      );
      return;
    }
    case "channel":
      return channel(h, o, today);
    case "audit": {
      const res = await fetch(`${app.baseUrl}/api/mobile/v1/night-audit`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "idempotency-key": newId() },
        body: JSON.stringify({ expectedBusinessDate: today }),
      });
      expect(res.status, await res.clone().text()).toBeLessThan(500);
      if (!res.ok || !o.reinstate) return;
      // the latest no-show (an earlier day's is past reinstating)
      for (const id of [...made].reverse()) {
        if ((await lineOf(id)).status !== ReservationStatus.NO_SHOW) continue;
        await reservations.reinstateReservation({ propertyCode, reservationId: id }, { headers });
        reinstated.count++;
        return;
      }
      return;
    }
  }
}

describe("the inventory invariant", () => {
  it("holds after every step of random front-desk, channel and repair sequences", async () => {
    const transport = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
    const reservations = createClient(ReservationService, transport);
    const inventory = createClient(InventoryService, transport);
    const succeeded = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 8, maxLength: 18 }), async (ops) => {
        const h = await newHotel();
        const made: string[] = [];
        const periods: string[] = [];
        const inHouse: string[] = [];
        const arrivals = new Map<string, string>();
        for (const [i, o] of ops.entries()) {
          const done = await run(h, o, reservations, inventory, made, periods, inHouse, arrivals).then(
            () => true,
            (err: unknown) => (refusedCleanly(err), false),
          );
          if (done) succeeded.set(o.kind, (succeeded.get(o.kind) ?? 0) + 1);
          const check = await verifyInventory(app.deps, h.code, false);
          expect(check.drift, `after step ${i} ${JSON.stringify(o)} of ${JSON.stringify(ops)}`).toEqual([]);
        }
      }),
      { numRuns: 14, seed: 3401, endOnFailure: true },
    );
    // the sequences did reach every operation (a test whose steps were all refused would prove nothing)
    expect(moved.count + (succeeded.get("move") ?? 0), "room moves").toBeGreaterThan(0);
    for (const kind of ["create", "modify", "cancel", "checkIn", "checkOut", "outOfOrder", "changeOutOfOrder"])
      expect(succeeded.get(kind) ?? 0, kind).toBeGreaterThan(0);
    for (const kind of ["removeOutOfOrder", "block", "channel", "audit"])
      expect(succeeded.get(kind) ?? 0, kind).toBeGreaterThan(0);
    expect(reinstated.count, "no-shows reinstated").toBeGreaterThan(0);
  });
});
