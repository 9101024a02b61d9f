import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoom, seedRoomTypeAndRatePlan } from "../helpers/hotel-fixtures.ts";
import { restCall, rpcClient } from "./faces.ts";

// The night audit never fails the hotel for one stay: a night it cannot charge (its price beyond the money bound,
// as data from before the bound may hold) is left out, reported in the pre-checks and the result, and charged by a
// later audit once staff fixed the price.

const MAX_SAFE = 2n ** 53n - 1n;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
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
