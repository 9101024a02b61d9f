import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoom, seedRoomTypeAndRatePlan } from "../helpers/hotel-fixtures.ts";
import { restCall, restFields, rpcClient, rpcFailure, rpcFaces } from "./faces.ts";

// One money bound (10^13 minor units) on every entry path, and a night audit that one absurd stay cannot stop.

const BOUND = 10n ** 13n;
const MAX_SAFE = 2n ** 53n - 1n;

let app: TestApp;
let hotel: { id: string; code: string };
let sandbox: { id: string; code: string };
let dbl: { id: string };
let bar: { id: string };
let manager: string;
let partner: string;

beforeAll(async () => {
  app = await startTestApp();
  hotel = await createTestProperty(app, { code: "BOUND-1", businessDate: "2027-03-01" });
  sandbox = await createTestProperty(app, { code: "BOUND-SBX", businessDate: "2027-03-01", sandbox: true });
  const inventory = app.services.inventory;
  dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (const n of ["101", "102", "103"]) await inventory.createRoom(hotel.id, { number: n, roomTypeId: dbl.id });
  bar = await inventory.createRatePlan(hotel.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  // a legal price per night whose stays add up beyond the bound after ten nights
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-05-01",
    to: "2027-05-31",
    amountMinor: BOUND / 10n,
  });
  manager = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
  partner = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [sandbox.code],
      scopes: ["reservations.write"],
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const mobileStay = (over: Record<string, unknown> = {}) => ({
  holderName: "Bound Guest",
  arrivalDate: "2027-03-10",
  departureDate: "2027-03-12",
  roomTypeId: dbl.id,
  ratePlanId: bar.id,
  adults: 2,
  currency: "TRY",
  ...over,
});

describe("the money bound at entry", () => {
  it("a manager's price override beyond the bound is refused, naming the field (REST, Connect, gRPC)", async () => {
    const rest = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay(),
      totalMinor: Number(MAX_SAFE),
      priceOverride: true,
    });
    expect([rest.status, rest.body.error?.code, restFields(rest.body)]).toEqual([
      400,
      "invalid_argument",
      ["totalMinor"],
    ]);
    for (const face of rpcFaces) {
      const mobile = rpcClient(app.baseUrl, face, MobileService, manager);
      expect(
        await rpcFailure(
          mobile.createMobileReservation({ ...mobileStay(), totalMinor: MAX_SAFE, priceOverride: true }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["totalMinor"] });
      const reservations = rpcClient(app.baseUrl, face, ReservationService, manager);
      const line = { roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2, amountMinor: BOUND + 1n };
      expect(
        await rpcFailure(
          reservations.createReservation({
            holderName: "Bound Guest",
            arrivalDate: "2027-03-10",
            departureDate: "2027-03-12",
            rooms: [line],
            priceOverride: true,
          }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["rooms[0].amountMinor"] });
    }
    const { rows } = await app.db.pool.query("select 1 from reservations where property_id = $1", [hotel.id]);
    expect(rows).toEqual([]);
  });

  it("a stay whose daily prices add up beyond the bound is refused at create, naming totalMinor", async () => {
    const tooLong = { arrivalDate: "2027-05-01", departureDate: "2027-05-12" }; // 11 nights of 10^12
    const rest = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay(tooLong),
      totalMinor: Number((BOUND / 10n) * 11n),
    });
    expect([rest.status, rest.body.error?.code, restFields(rest.body)]).toEqual([
      400,
      "invalid_argument",
      ["totalMinor"],
    ]);
    for (const face of rpcFaces) {
      // no amount given: the listed prices are the price, and they are beyond the bound
      const reservations = rpcClient(app.baseUrl, face, ReservationService, manager);
      expect(
        await rpcFailure(
          reservations.createReservation({
            holderName: "Long Guest",
            ...tooLong,
            rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2 }],
          }),
        ),
      ).toMatchObject({ code: "validation_failed", fields: ["totalMinor"] });
    }
    // a price beyond the bound is refused where it is set
    await expect(
      app.services.inventory.setPrices(hotel.id, {
        ratePlanId: bar.id,
        roomTypeId: dbl.id,
        from: "2027-06-01",
        to: "2027-06-02",
        amountMinor: BOUND + 1n,
      }),
    ).rejects.toMatchObject({ code: "invalid_argument", details: [{ field: "amountMinor" }] });
  });

  it("a partner's amounts beyond the bound are refused at entry (REST, Connect, gRPC)", async () => {
    const event = (ref: string) => ({
      eventType: "NEW",
      externalReference: ref,
      channel: "Booking.com",
      arrivalDate: "2027-03-10",
      departureDate: "2027-03-12",
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 2 * 10 ** 13 }],
      totalMinor: 2 * 10 ** 13,
      currency: "TRY",
      holder: { name: "Partner Guest" },
    });
    const rest = await restCall(
      app.baseUrl,
      "POST",
      `/api/v1/properties/${sandbox.code}/reservation-events`,
      partner,
      event("BOUND-REST"),
    );
    expect(rest.status).toBe(422);
    expect(restFields(rest.body)).toEqual(["rooms[0].amountMinor", "totalMinor"]);
    for (const face of rpcFaces) {
      const connectivity = rpcClient(app.baseUrl, face, ConnectivityService, partner);
      const e = event(`BOUND-${face}`);
      const failure = await rpcFailure(
        connectivity.createReservationEvent({
          ...e,
          propertyCode: sandbox.code,
          rooms: e.rooms.map((r) => ({ ...r, amountMinor: BigInt(r.amountMinor) })),
          totalMinor: BigInt(e.totalMinor),
        }),
      );
      expect(failure).toMatchObject({ code: "validation_failed", fields: ["rooms[0].amountMinor", "totalMinor"] });
    }
  });

  it("a charge that would take a folio's balance beyond the bound is refused (Connect, gRPC)", async () => {
    const created = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay({ arrivalDate: "2027-04-01", departureDate: "2027-04-02" }),
      totalMinor: 25000,
    });
    expect(created.status).toBe(201);
    for (const face of rpcFaces) {
      const folios = rpcClient(app.baseUrl, face, FolioService, manager);
      const { folio } = await folios.getFolio({ reservationId: created.body.id });
      if (face === "connect")
        await folios.postCharge({ folioId: folio!.id, code: "HALL", description: "Ballroom", amountMinor: BOUND });
      expect(
        await rpcFailure(
          folios.postCharge({ folioId: folio!.id, code: "SPA", description: "Massage", amountMinor: 1n }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["amountMinor"] });
      expect((await folios.getFolio({ folioId: folio!.id })).folio!.balanceMinor).toBe(BOUND);
    }
  });
});

/** A hotel on D with two guests in house for three nights: one at 100.00 a night, one whose price is absurd. */
async function auditHotel(code: string, D: string) {
  const p = await createTestProperty(app, { code, businessDate: D });
  const seeded = await seedRoomTypeAndRatePlan(app.db.pool, p);
  const token = (await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken;
  const nights = [0, 1, 2].map((i) =>
    new Date(Date.parse(`${D}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
  );
  const departure = new Date(Date.parse(`${D}T00:00:00Z`) + 3 * 86_400_000).toISOString().slice(0, 10);
  for (const date of nights)
    await app.db.pool.query(
      `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor) values ($1, $2, $3, $4, 10000)`,
      [p.id, seeded.ratePlanId, seeded.roomTypeId, date],
    );
  const stay = async (room: string, nightly: bigint[]) =>
    seedReservation(app.db.pool, seeded, {
      arrival: D,
      departure,
      nightly,
      status: "IN_HOUSE",
      roomId: await seedRoom(app.db.pool, seeded, room),
      checkedInAt: new Date(`${D}T12:00:00.000Z`),
    });
  // written as data from before the bound would be: straight into the database
  const absurd = await stay("201", [MAX_SAFE, MAX_SAFE, MAX_SAFE]);
  const good = await stay("202", [10000n, 10000n, 10000n]);
  return { p, token, good, absurd, nights };
}

async function roomCharges(reservationId: string): Promise<{ date: string; amount: string }[]> {
  const { rows } = await app.db.pool.query<{ date: string; amount: string }>(
    `select c.business_date::text as date, c.amount_minor::text as amount from folio_charges c
       join folios f on f.id = c.folio_id where f.reservation_id = $1 and c.kind = 'ROOM' order by c.business_date`,
    [reservationId],
  );
  return rows;
}

describe("the night audit with a stay it cannot charge", () => {
  it("REST: the pre-checks name the stay, the audit charges the rest and reports it", async () => {
    const D = "2027-05-01";
    const h = await auditHotel("AUDIT-REST", D);
    const checks = await restCall(app.baseUrl, "GET", "/api/mobile/v1/night-audit", h.token);
    expect(checks.status).toBe(200);
    expect(checks.body.canRun).toBe(true);
    const check = checks.body.checks.find((c: { id: string }) => c.id === "room_charges_not_postable");
    expect(check).toMatchObject({ status: "warning", count: 1 });
    expect(check.message).toContain(h.absurd.code);
    expect(checks.body.unchargedNights).toEqual([
      {
        reservationId: h.absurd.id,
        reservationCode: h.absurd.code,
        reservationRoomId: h.absurd.roomLineId,
        businessDate: D,
        reason: expect.stringContaining("money bound"),
      },
    ]);
    const run = await restCall(app.baseUrl, "POST", "/api/mobile/v1/night-audit", h.token, {
      expectedBusinessDate: D,
    });
    expect(run.status).toBe(200);
    expect(run.body.businessDate).toBe("2027-05-02");
    expect(run.body.summary).toMatchObject({ roomChargesPosted: 1, roomChargesMinor: 10000 });
    expect(run.body.summary.unchargedNights).toMatchObject([{ reservationCode: h.absurd.code, businessDate: D }]);
    expect(await roomCharges(h.good.id)).toEqual([{ date: D, amount: "10000" }]);
    expect(await roomCharges(h.absurd.id)).toEqual([]);
  });

  it("Connect: the same over FolioService", async () => {
    const D = "2027-05-01";
    const h = await auditHotel("AUDIT-CONNECT", D);
    const folios = rpcClient(app.baseUrl, "connect", FolioService, h.token);
    const checks = await folios.getNightAuditChecks({});
    expect(checks.canRun).toBe(true);
    expect(checks.checks.find((c) => c.id === "room_charges_not_postable")).toMatchObject({
      status: "warning",
      count: 1,
    });
    expect(checks.unchargedNights).toMatchObject([{ reservationCode: h.absurd.code }]);
    const run = await folios.runNightAudit({ expectedBusinessDate: D });
    expect(run.summary).toMatchObject({ roomChargesPosted: 1, roomChargesMinor: 10000n });
    expect(run.summary!.unchargedNights.map((u) => [u.reservationCode, u.businessDate])).toEqual([[h.absurd.code, D]]);
    expect(await roomCharges(h.good.id)).toEqual([{ date: D, amount: "10000" }]);
  });

  it("gRPC: the stay is reported until staff fix its price; the next audit charges the nights it left out", async () => {
    const D = "2027-05-01";
    const h = await auditHotel("AUDIT-GRPC", D);
    const folios = rpcClient(app.baseUrl, "grpc", FolioService, h.token);
    const first = await folios.runNightAudit({ expectedBusinessDate: D });
    expect(first.summary!.unchargedNights.map((u) => u.reservationCode)).toEqual([h.absurd.code]);
    // still reported before the next run: the night of D and tonight's
    const before = await folios.getNightAuditChecks({});
    expect(before.unchargedNights.map((u) => [u.reservationCode, u.businessDate])).toEqual([
      [h.absurd.code, D],
      [h.absurd.code, h.nights[1]],
    ]);
    // staff fix the price: three nights at our daily price of 100.00
    const reservations = rpcClient(app.baseUrl, "grpc", ReservationService, h.token);
    await reservations.updateReservation({
      reservationId: h.absurd.id,
      rooms: [{ reservationRoomId: h.absurd.roomLineId, amountMinor: 30000n }],
    });
    const after = await folios.getNightAuditChecks({});
    expect(after.checks.find((c) => c.id === "room_charges_not_postable")).toMatchObject({ status: "ok", count: 0 });
    const second = await folios.runNightAudit({ expectedBusinessDate: h.nights[1]! });
    expect(second.summary).toMatchObject({ roomChargesPosted: 3, unchargedNights: [] });
    expect(await roomCharges(h.absurd.id)).toEqual([
      { date: D, amount: "10000" },
      { date: h.nights[1], amount: "10000" },
    ]);
    const { rows } = await app.db.pool.query("select 1 from night_audit_uncharged_nights where property_id = $1", [
      h.p.id,
    ]);
    expect(rows).toEqual([]);
  });
});
