import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { seedProperty, seedReservation, seedRoom, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { createFolioService, type FolioService } from "../../src/modules/folio/index.ts";
import { createReservationService, type ReservationService } from "../../src/modules/reservations/index.ts";
import { createNightAuditService, type NightAuditService } from "../../src/modules/night-audit/index.ts";

let t: TestDatabase;
let folios: FolioService;
let audit: NightAuditService;
let reservations: ReservationService;
const clock = new ManualClock("2026-11-22T21:00:00.000Z");

beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
  folios = createFolioService({ transact: t.transact, clock });
  reservations = createReservationService({ transact: t.transact, pool: t.db.pool, clock });
  audit = createNightAuditService({ transact: t.transact, clock, folios, markNoShow: reservations.markNoShowInTx });
});
afterAll(async () => {
  await t?.close();
});

const D = "2026-11-22";

async function code(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

async function snapshot(propertyId: string) {
  const q = async (text: string) => (await t.db.pool.query(text, [propertyId])).rows;
  return {
    date: await q(`select business_date::text from properties where id = $1`),
    charges: await q(
      `select id, amount_minor::text, business_date::text from folio_charges where property_id = $1 order by id`,
    ),
    statuses: await q(`select id, status from reservations where property_id = $1 order by id`),
    events: await q(`select count(*)::int from domain_events where property_id = $1`),
  };
}

/** A hotel on D: one arrival not checked in, one guest in house for three nights, one guest departing today. */
async function hotelOnD() {
  const p = await seedProperty(t.db.pool, { businessDate: D });
  const room1 = await seedRoom(t.db.pool, p, "101");
  const room2 = await seedRoom(t.db.pool, p, "102");
  const checkedIn = new Date("2026-11-21T12:00:00.000Z");
  for (const date of [D, "2026-11-23"]) {
    await t.db.pool.query(
      `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor) values ($1, $2, $3, $4, 9000)`,
      [p.id, p.ratePlanId, p.roomTypeId, date],
    );
  }
  const { reservation: arrival } = await reservations.create(
    { propertyId: p.id, canOverridePrice: false },
    {
      source: "DIRECT",
      channel: null,
      externalReference: null,
      holderName: "Ayşe Yılmaz",
      arrivalDate: D,
      departureDate: "2026-11-24",
      rooms: [{ roomTypeId: p.roomTypeId, ratePlanId: p.ratePlanId, adults: 2 }],
      status: "GUARANTEED",
    },
  );
  const inHouse = await seedReservation(t.db.pool, p, {
    arrival: "2026-11-21",
    departure: "2026-11-24",
    nightly: [100_00n, 110_00n, 120_00n],
    status: "IN_HOUSE",
    roomId: room1,
    checkedInAt: checkedIn,
  });
  const departing = await seedReservation(t.db.pool, p, {
    arrival: "2026-11-20",
    departure: D,
    nightly: [80_00n, 80_00n],
    status: "IN_HOUSE",
    roomId: room2,
    checkedInAt: checkedIn,
  });
  return { p, arrival, inHouse, departing };
}

async function checkOut(p: SeededProperty, reservationId: string) {
  await t.db.pool.query(
    `update reservation_rooms set checked_out_at = now() where property_id = $1 and reservation_id = $2`,
    [p.id, reservationId],
  );
  await t.db.pool.query(`update reservations set status = 'CHECKED_OUT' where property_id = $1 and id = $2`, [
    p.id,
    reservationId,
  ]);
}

describe("night audit", () => {
  it("reports the pre-checks with ok, warning and blocking", async () => {
    const { p } = await hotelOnD();
    const res = await audit.getChecks(p.id);
    expect(res.businessDate).toBe(D);
    expect(res.canRun).toBe(false);
    expect(res.checks.map((c) => [c.id, c.status, c.count])).toEqual([
      ["arrivals_not_checked_in", "warning", 1],
      ["departures_not_checked_out", "blocking", 1],
      ["unbalanced_departed_folios", "ok", 0],
      ["rooms_without_housekeeping_status", "ok", 0],
      ["room_charges_not_postable", "ok", 0],
      ["guests_not_reported", "ok", 0],
    ]);
    // A status last written before the business day began (Istanbul midnight) is no status for the day.
    await t.db.pool.query(
      `update rooms set updated_at = '2026-11-21T20:59:59Z' where property_id = $1 and number = '101'`,
      [p.id],
    );
    const stale = await audit.getChecks(p.id);
    expect(stale.checks.find((c) => c.id === "rooms_without_housekeeping_status")).toMatchObject({
      status: "warning",
      count: 1,
    });
  });

  it("refuses to run while a check blocks and changes nothing", async () => {
    const { p } = await hotelOnD();
    const before = await snapshot(p.id);
    const err = await code(audit.run(p.id, "user:u1", { expectedBusinessDate: D }));
    expect(err.code).toBe("conflict");
    expect(err.details).toEqual([
      { field: "departures_not_checked_out", reason: expect.stringContaining("1 departing") },
    ]);
    expect(await snapshot(p.id)).toEqual(before);
  });

  it("posts room charges once, marks no-shows and advances the date; a second run is business_date_moved", async () => {
    const { p, arrival, inHouse, departing } = await hotelOnD();
    await checkOut(p, departing.id);
    const folio = await folios.getFolio(p.id, { reservationId: departing.id });
    await folios.postCharge(p.id, "user:u1", {
      folioId: folio.id,
      code: "MINIBAR",
      description: "Water",
      amountMinor: 5_00n,
    });
    const warned = await audit.getChecks(p.id);
    expect(warned.checks.find((c) => c.id === "unbalanced_departed_folios")).toMatchObject({
      status: "warning",
      count: 1,
    });
    expect(warned.canRun).toBe(true);

    const sold = `select coalesce(sum(sold), 0)::int as n from room_type_days where property_id = $1`;
    expect((await t.db.pool.query(sold, [p.id])).rows[0].n).toBe(2);
    const res = await audit.run(p.id, "night_audit:user:u1", { expectedBusinessDate: D });
    expect(res).toMatchObject({ previousBusinessDate: D, businessDate: "2026-11-23" });
    expect(res.summary).toMatchObject({
      roomChargesPosted: 1,
      roomChargesMinor: 110_00n,
      noShowsMarked: 1,
      currency: "TRY",
      amountScale: 100,
    });
    // The no-show went through the reservations service in the audit's transaction: status, inventory, events.
    expect((await t.db.pool.query(`select status from reservations where id = $1`, [arrival.id])).rows[0].status).toBe(
      "NO_SHOW",
    );
    expect((await t.db.pool.query(sold, [p.id])).rows[0].n).toBe(0);
    const { rows: evs } = await t.db.pool.query<{ type: string; data: Record<string, unknown> }>(
      `select type, data from domain_events where property_id = $1 order by created_at, id`,
      [p.id],
    );
    expect(
      evs.filter((e) => e.type === "reservation.updated" && e.data.id === arrival.id).map((e) => e.data.status),
    ).toEqual(["NO_SHOW"]);
    expect(JSON.stringify(evs)).not.toMatch(/Ayşe|Yılmaz/);
    const f = await folios.getFolio(p.id, { reservationId: inHouse.id });
    expect(f.charges.map((c) => [c.kind, c.amountMinor, c.businessDate, c.reservationRoomId, c.description])).toEqual([
      ["ROOM", 110_00n, D, inHouse.roomLineId, `Room 101, night of ${D}`],
    ]);

    const after = await snapshot(p.id);
    const again = await code(audit.run(p.id, "user:u1", { expectedBusinessDate: D }));
    expect(again.code).toBe("business_date_moved");
    expect(again.httpStatus).toBe(409);
    expect(await snapshot(p.id)).toEqual(after);

    // The next night charges the next night's price.
    const next = await audit.run(p.id, "user:u1", { expectedBusinessDate: "2026-11-23" });
    expect(next.summary).toMatchObject({ roomChargesPosted: 1, roomChargesMinor: 120_00n, noShowsMarked: 0 });
    expect((await folios.getFolio(p.id, { reservationId: inHouse.id })).chargesMinor).toBe(230_00n);
  });

  it("runs once when two audits race for the same date", async () => {
    const { p, departing, inHouse } = await hotelOnD();
    await checkOut(p, departing.id);
    const results = await Promise.allSettled(
      [1, 2, 3].map(() => audit.run(p.id, "user:u1", { expectedBusinessDate: D })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results)
      if (r.status === "rejected") expect((r.reason as AppError).code).toBe("business_date_moved");
    expect((await folios.getFolio(p.id, { reservationId: inHouse.id })).charges).toHaveLength(1);
    expect((await snapshot(p.id)).date).toEqual([{ business_date: "2026-11-23" }]);
  });

  it("lets payments on in-house folios proceed while an audit runs (no deadlock, nothing lost)", async () => {
    const { p, departing, inHouse } = await hotelOnD();
    await checkOut(p, departing.id);
    const f = await folios.getFolio(p.id, { reservationId: inHouse.id });
    const work = [
      audit.run(p.id, "user:u1", { expectedBusinessDate: D }),
      ...Array.from({ length: 8 }, () =>
        folios.postPayment(p.id, "user:u2", { folioId: f.id, amountMinor: 1_00n, methodCode: "CASH" }),
      ),
    ];
    const results = await Promise.allSettled(work);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    const after = await folios.getFolio(p.id, { folioId: f.id });
    expect([after.chargesMinor, after.paymentsMinor]).toEqual([110_00n, 8_00n]);
  });

  it("counts a departed guest's folio as unbalanced exactly while its balance is not zero (charges, payments, reversals, room charges)", async () => {
    const { p, departing, inHouse } = await hotelOnD();
    await checkOut(p, departing.id);
    const unbalanced = async () =>
      (await audit.getChecks(p.id)).checks.find((c) => c.id === "unbalanced_departed_folios")!.count;
    const f = await folios.getFolio(p.id, { reservationId: departing.id });
    expect(await unbalanced()).toBe(0);
    await folios.postCharge(p.id, "user:u1", {
      folioId: f.id,
      code: "MINIBAR",
      description: "Water",
      amountMinor: 5_00n,
    });
    expect(await unbalanced()).toBe(1);
    const pay = await folios.postPayment(p.id, "user:u1", { folioId: f.id, amountMinor: 5_00n, methodCode: "CASH" });
    expect(await unbalanced()).toBe(0);
    await folios.reversePayment(p.id, "user:u1", { paymentId: pay.id });
    expect(await unbalanced()).toBe(1);
    await folios.postPayment(p.id, "user:u1", { folioId: f.id, amountMinor: 5_00n, methodCode: "VISA" });
    expect(await unbalanced()).toBe(0);
    // The in-house guest's folio gets the night's room charge from the audit: open, but not a departed guest's.
    await audit.run(p.id, "user:u1", { expectedBusinessDate: D });
    expect((await folios.getFolio(p.id, { reservationId: inHouse.id })).balanceMinor).toBe(110_00n);
    expect(await unbalanced()).toBe(0);
    await checkOut(p, inHouse.id);
    expect(await unbalanced()).toBe(1);
  });

  it("never touches another property", async () => {
    const a = await hotelOnD();
    const b = await hotelOnD();
    await checkOut(a.p, a.departing.id);
    const before = await snapshot(b.p.id);
    await audit.run(a.p.id, "user:u1", { expectedBusinessDate: D });
    expect(await snapshot(b.p.id)).toEqual(before);
  });

  it("rejects a malformed expected date", async () => {
    const { p } = await hotelOnD();
    for (const bad of ["", "2026-13-01", "2026-02-30", "22.11.2026"]) {
      expect((await code(audit.run(p.id, "user:u1", { expectedBusinessDate: bad }))).code).toBe("invalid_argument");
    }
  });
});
