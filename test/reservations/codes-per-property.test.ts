// Reservation codes are numbered per property: two properties booking interleaved, on every face (mobile REST,
// Connect, gRPC, partner events applied by the worker) and concurrently, each get R100001, R100002, ... without a
// gap, as their partner feeds show; a create that fails after taking a number gives it back; codes made before
// stay valid and are skipped. The number is taken ahead of the create's transaction: a create waiting inside its
// transaction holds up no other create of the property, and a number given back after a later one was taken stays
// a gap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { BoardType, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { until } from "../helpers/service-process.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const NIGHT = 150_000n;
const day = (n: number): string => new Date(Date.UTC(2027, 0, 1 + n)).toISOString().slice(0, 10);

/** A property with `rooms` doubles priced for 2027, an internal client, a manager session and a partner. */
async function hotel(rooms: number) {
  const p = await createTestProperty(app, { businessDate: "2026-12-01" });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["admin", "reservations.read", "reservations.write", "availability.read"],
  });
  const h = { headers: bearer(internal.accessToken) };
  const inventory = createClient(InventoryService, createGrpcTransport({ baseUrl: app.baseUrl }));
  const { roomType } = await inventory.createRoomType(
    { propertyCode: p.code, code: "DBL", name: "Double", maxOccupancy: 2 },
    h,
  );
  for (let i = 1; i <= rooms; i++)
    await inventory.createRoom({ propertyCode: p.code, number: `${100 + i}`, roomTypeId: roomType!.id }, h);
  const { ratePlan } = await inventory.createRatePlan(
    {
      propertyCode: p.code,
      code: "BB",
      name: "B&B",
      boardType: BoardType.BED_AND_BREAKFAST,
      roomTypeIds: [roomType!.id],
    },
    h,
  );
  await inventory.setPrices(
    {
      propertyCode: p.code,
      ratePlanId: ratePlan!.id,
      roomTypeId: roomType!.id,
      from: day(0),
      to: day(200),
      amountMinor: NIGHT,
    },
    h,
  );
  for (const [kind, code] of [
    ["room_type", "DBL"],
    ["rate_plan", "BB"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: p.code, provider: "acme", kind, code, externalCode: code });
  const partner = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [p.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const rpc = (face: "connect" | "grpc") =>
    createClient(
      ReservationService,
      face === "grpc"
        ? createGrpcTransport({ baseUrl: app.baseUrl })
        : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
  let next = 0;
  /** One booking of one night on its own date (so rooms never run out), on the given face. */
  async function book(face: "rest" | "connect" | "grpc" | "partner", night = next++): Promise<void> {
    if (face === "connect" || face === "grpc") {
      await rpc(face).createReservation(
        {
          propertyCode: p.code,
          source: ReservationSource.PANEL,
          holderName: "Mehmet Demir",
          arrivalDate: day(night),
          departureDate: day(night + 1),
          rooms: [{ roomTypeId: roomType!.id, ratePlanId: ratePlan!.id, adults: 2, children: 0 }],
        },
        h,
      );
      return;
    }
    if (face === "rest") {
      const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
        method: "POST",
        headers: { ...bearer(manager.accessToken), "content-type": "application/json", "idempotency-key": newId() },
        body: JSON.stringify({
          holderName: "Ayse Yilmaz",
          arrivalDate: day(night),
          departureDate: day(night + 1),
          roomTypeId: roomType!.id,
          ratePlanId: ratePlan!.id,
          adults: 2,
          totalMinor: Number(NIGHT),
          currency: "TRY",
        }),
      });
      if (res.status !== 201) throw new Error(`mobile create: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      return;
    }
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${p.code}/reservation-events`, {
      method: "POST",
      headers: { ...bearer(partner.accessToken), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: `BK-${p.code}-${night}`,
        arrivalDate: day(night),
        departureDate: day(night + 1),
        currency: "TRY",
        holder: { name: "Channel Guest" },
        channel: "Booking.com",
        rooms: [{ roomTypeCode: "DBL", ratePlanCode: "BB", adults: 2, children: 0, amountMinor: Number(NIGHT) }],
        totalMinor: Number(NIGHT),
      }),
    });
    if (res.status !== 202) throw new Error(`partner event: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  /** The codes of the property's partner feed, in number order. */
  async function feedCodes(): Promise<string[]> {
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${p.code}/reservations?limit=500`, {
      headers: bearer(partner.accessToken),
    });
    const body = (await res.json()) as { data: { code: string }[] };
    return body.data.map((r) => r.code).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  }
  return { p, book, feedCodes, roomTypeId: roomType!.id, ratePlanId: ratePlan!.id, h, rpc };
}

const sequence = (n: number): string[] => Array.from({ length: n }, (_, i) => `R${100001 + i}`);

describe("reservation codes per property", () => {
  it(
    "two properties booking interleaved on every face, then concurrently, each get a gap-free sequence",
    { timeout: 60_000 },
    async () => {
      const a = await hotel(2);
      const b = await hotel(2);
      const faces = ["rest", "connect", "grpc", "partner"] as const;
      for (const face of faces) {
        await a.book(face);
        await b.book(face);
      }
      await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).book(faces[i % 3]!)));
      await until(
        async () => (await a.feedCodes()).length === 8 && (await b.feedCodes()).length === 8,
        10_000,
        "all bookings",
      );
      expect(await a.feedCodes()).toEqual(sequence(8));
      expect(await b.feedCodes()).toEqual(sequence(8));
    },
  );

  it("a create that fails after taking its number (sold out) gives it back", { timeout: 30_000 }, async () => {
    const a = await hotel(1);
    await a.book("grpc", 0);
    // the same night again: the room is gone, the insert's transaction rolls back
    await expect(a.book("connect", 0)).rejects.toThrow(/No room/);
    await expect(a.book("rest", 0)).rejects.toThrow(/409/);
    await a.book("rest", 1);
    expect(await a.feedCodes()).toEqual(sequence(2));
  });

  it(
    "a create waiting inside its transaction holds up no other create of the property; its number, given back too late, stays a gap",
    { timeout: 60_000 },
    async () => {
      const a = await hotel(1);
      // another session holds night 5's day row: a create of that night waits on it after taking its number
      await app.db.pool.query(
        "insert into room_type_days (property_id, room_type_id, date, total) values ($1, $2, $3, 1) on conflict do nothing",
        [a.p.id, a.roomTypeId, day(5)],
      );
      const locker = await app.db.pool.connect();
      try {
        await locker.query("begin");
        await locker.query(
          "select 1 from room_type_days where property_id = $1 and room_type_id = $2 and date = $3 for update",
          [a.p.id, a.roomTypeId, day(5)],
        );
        const waiting = a.book("connect", 5).then(
          () => "booked",
          (err: unknown) => String(err),
        );
        const counter = async () =>
          (
            await app.db.pool.query<{ n: string }>(
              "select last_number::text as n from reservation_code_counters where property_id = $1",
              [a.p.id],
            )
          ).rows[0]?.n;
        // its number is taken and committed on its own while its transaction waits
        await until(async () => (await counter()) === "100001", 10_000, "the waiting create's number");
        // another create of the property goes by meanwhile
        await a.book("grpc", 6);
        expect(await a.feedCodes()).toEqual(["R100002"]);
        // the room is blocked away: the waiting create fails; its number is no longer the last, so it is not reused
        await locker.query(
          "update room_type_days set blocked = total where property_id = $1 and room_type_id = $2 and date = $3",
          [a.p.id, a.roomTypeId, day(5)],
        );
        await locker.query("commit");
        expect(await waiting).toMatch(/No room/);
        await a.book("rest", 7);
        expect(await a.feedCodes()).toEqual(["R100002", "R100003"]);
      } finally {
        locker.release();
      }
    },
  );

  it("codes made before (the former group-wide numbers) stay and are skipped", { timeout: 30_000 }, async () => {
    const a = await hotel(3);
    await a.book("grpc", 0);
    // two rows as an older version numbered them, then the counter reaches them
    for (const [code, night] of [
      ["R100002", 50],
      ["R100003", 51],
    ] as const)
      await app.db.pool.query(
        `insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at, change_seq)
         values ($1, $2, $3, 'GUARANTEED', 'DIRECT', 'Old Booking', $4, $5, 2, 0, 0, 'TRY', now(), now(), $6)`,
        [newId(), a.p.id, code, day(night), day(night + 1), 1000 + night],
      );
    await a.book("connect", 1);
    await a.book("rest", 2);
    expect(await a.feedCodes()).toEqual(["R100001", "R100002", "R100003", "R100004", "R100005"]);
  });
});
