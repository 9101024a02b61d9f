import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { seedProperty, seedReservation, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { createFolioService, type FolioService } from "../../src/modules/folio/index.ts";

let t: TestDatabase;
let folios: FolioService;
let hotel: SeededProperty;
let other: SeededProperty;
const clock = new ManualClock("2026-11-22T10:00:00.000Z");

beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
  folios = createFolioService({ transact: t.transact, clock });
  hotel = await seedProperty(t.db.pool);
  other = await seedProperty(t.db.pool);
});
afterAll(async () => {
  await t?.close();
});

async function reservation(p: SeededProperty = hotel) {
  return seedReservation(t.db.pool, p, { arrival: "2026-11-22", departure: "2026-11-24", nightly: [100_00n, 120_00n] });
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  return err as AppError;
}

async function events(type: string, propertyId: string) {
  const { rows } = await t.db.pool.query<{ data: Record<string, unknown>; occurred_at: Date }>(
    `select data, occurred_at from domain_events where type = $1 and property_id = $2 order by created_at, id`,
    [type, propertyId],
  );
  return rows;
}

describe("folios", () => {
  it("opens one folio per reservation with a per-property number", async () => {
    const p = await seedProperty(t.db.pool);
    const r1 = await reservation(p);
    const r2 = await reservation(p);
    const f1 = await folios.getFolio(p.id, { reservationId: r1.id });
    const again = await folios.getFolio(p.id, { reservationId: r1.id });
    const f2 = await folios.getFolio(p.id, { reservationId: r2.id });
    expect(f1.id).toBe(again.id);
    expect([f1.number, f2.number]).toEqual(["000001", "000002"]);
    expect(f1).toMatchObject({
      reservationId: r1.id,
      reservationCode: r1.code,
      currency: "TRY",
      amountScale: 100,
      balanceMinor: 0n,
    });
    expect((await folios.getFolio(p.id, { folioId: f1.id })).id).toBe(f1.id);
  });

  it("hides folios and reservations of another property (404, not 403)", async () => {
    const r = await reservation(other);
    const f = await folios.getFolio(other.id, { reservationId: r.id });
    await rejectsWith(folios.getFolio(hotel.id, { folioId: f.id }), "not_found");
    await rejectsWith(folios.getFolio(hotel.id, { reservationId: r.id }), "not_found");
    await rejectsWith(
      folios.postCharge(hotel.id, "user:x", {
        folioId: f.id,
        code: "MINIBAR",
        description: "Water",
        amountMinor: 5_00n,
      }),
      "not_found",
    );
    await rejectsWith(
      folios.postPayment(hotel.id, "user:x", { folioId: f.id, amountMinor: 5_00n, methodCode: "CASH" }),
      "not_found",
    );
    const pay = await folios.postPayment(other.id, "user:x", { folioId: f.id, amountMinor: 5_00n, methodCode: "CASH" });
    await rejectsWith(folios.reversePayment(hotel.id, "user:x", { paymentId: pay.id }), "not_found");
  });

  it("keeps balance = charges - payments in bigint minor units", async () => {
    const r = await reservation();
    const f = await folios.getFolio(hotel.id, { reservationId: r.id });
    await folios.postCharge(hotel.id, "user:u1", {
      folioId: f.id,
      code: "minibar",
      description: "Water",
      amountMinor: 15_50n,
    });
    clock.advance(1);
    await folios.postCharge(hotel.id, "user:u1", {
      folioId: f.id,
      code: "LAUNDRY",
      description: "Shirt",
      amountMinor: 40_00n,
    });
    await folios.postPayment(hotel.id, "user:u1", { folioId: f.id, amountMinor: 30_00n, methodCode: "visa" });
    const after = await folios.getFolio(hotel.id, { folioId: f.id });
    expect(after.chargesMinor).toBe(55_50n);
    expect(after.paymentsMinor).toBe(30_00n);
    expect(after.balanceMinor).toBe(25_50n);
    expect(after.charges.map((c) => [c.code, c.kind, c.businessDate])).toEqual([
      ["MINIBAR", "EXTRA", "2026-11-22"],
      ["LAUNDRY", "EXTRA", "2026-11-22"],
    ]);
    expect(after.payments[0]).toMatchObject({ methodCode: "VISA", methodKind: "CARD", amountMinor: 30_00n });
  });

  it("rejects bad input before touching the database", async () => {
    const r = await reservation();
    const f = await folios.getFolio(hotel.id, { reservationId: r.id });
    const charge = { folioId: f.id, code: "MINIBAR", description: "Water", amountMinor: 1n };
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, amountMinor: 0n }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, amountMinor: -5n }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, amountMinor: 10n ** 14n }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, code: "ROOM" }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, code: "bad code!" }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, description: "  " }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, folioId: "nope" }), "invalid_argument");
    await rejectsWith(folios.postCharge(hotel.id, "u", { ...charge, folioId: newId() }), "not_found");
    await rejectsWith(
      folios.postPayment(hotel.id, "u", { folioId: f.id, amountMinor: 1n, methodCode: "BITCOIN" }),
      "invalid_argument",
    );
    await rejectsWith(
      folios.postPayment(hotel.id, "u", { folioId: f.id, amountMinor: -1n, methodCode: "CASH" }),
      "invalid_argument",
    );
    await rejectsWith(folios.reversePayment(hotel.id, "u", { paymentId: newId() }), "not_found");
    expect((await folios.getFolio(hotel.id, { folioId: f.id })).charges).toHaveLength(0);
  });
});

describe("payments and reversals", () => {
  it("writes folio.payment_posted with exactly the documented fields and no personal data", async () => {
    const p = await seedProperty(t.db.pool);
    const r = await reservation(p);
    const f = await folios.getFolio(p.id, { reservationId: r.id });
    clock.set("2026-11-22T11:00:00.123Z");
    const pay = await folios.postPayment(p.id, "user:u1", {
      folioId: f.id,
      amountMinor: 250_00n,
      methodCode: "CASH",
      reference: "receipt 7",
    });
    const [e] = await events("folio.payment_posted", p.id);
    expect(e!.data).toEqual({
      paymentId: pay.id,
      folioId: f.id,
      folioNumber: f.number,
      reservationId: r.id,
      reservationCode: r.code,
      amountMinor: 25000,
      amountScale: 100,
      currency: "TRY",
      methodCode: "CASH",
      methodKind: "CASH",
      isReversal: false,
      reversedPaymentId: null,
      postedAt: "2026-11-22T11:00:00.123Z",
    });
    expect(e!.occurred_at.toISOString()).toBe("2026-11-22T11:00:00.123Z");
    expect(JSON.stringify(e!.data)).not.toMatch(/Ayşe|Yılmaz|receipt/);
  });

  it("reverses a payment once with a negative payment referencing it, never editing it", async () => {
    const p = await seedProperty(t.db.pool);
    const r = await reservation(p);
    const f = await folios.getFolio(p.id, { reservationId: r.id });
    const pay = await folios.postPayment(p.id, "user:u1", { folioId: f.id, amountMinor: 80_00n, methodCode: "EFT" });
    const rev = await folios.reversePayment(p.id, "user:u2", { paymentId: pay.id, reference: "wrong folio" });
    expect(rev).toMatchObject({
      amountMinor: -80_00n,
      reversedPaymentId: pay.id,
      methodCode: "EFT",
      methodKind: "TRANSFER",
      folioId: f.id,
    });
    const after = await folios.getFolio(p.id, { folioId: f.id });
    expect(after.paymentsMinor).toBe(0n);
    expect(after.payments.find((x) => x.id === pay.id)).toMatchObject({
      amountMinor: 80_00n,
      reversedByPaymentId: rev.id,
    });
    await rejectsWith(folios.reversePayment(p.id, "user:u2", { paymentId: pay.id }), "invalid_transition");
    await rejectsWith(folios.reversePayment(p.id, "user:u2", { paymentId: rev.id }), "invalid_transition");
    const evs = await events("folio.payment_posted", p.id);
    expect(evs).toHaveLength(2);
    expect(evs[1]!.data).toMatchObject({
      paymentId: rev.id,
      amountMinor: -8000,
      isReversal: true,
      reversedPaymentId: pay.id,
      methodKind: "TRANSFER",
    });
  });

  it("lets exactly one of ten concurrent reversals of a payment succeed", async () => {
    const p = await seedProperty(t.db.pool);
    const r = await reservation(p);
    const f = await folios.getFolio(p.id, { reservationId: r.id });
    const pay = await folios.postPayment(p.id, "user:u1", { folioId: f.id, amountMinor: 10_00n, methodCode: "CARD" });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => folios.reversePayment(p.id, "user:u1", { paymentId: pay.id })),
    );
    expect(results.filter((x) => x.status === "fulfilled")).toHaveLength(1);
    for (const x of results)
      if (x.status === "rejected") expect((x.reason as AppError).code).toBe("invalid_transition");
    expect((await folios.getFolio(p.id, { folioId: f.id })).paymentsMinor).toBe(0n);
    expect(await events("folio.payment_posted", p.id)).toHaveLength(2);
  });
});
