import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/lib/clock.ts";
import { poolQueryable } from "../../src/db/queryable.ts";
import { folioBalanceBackfillSql } from "../../src/db/migrations/0022-folio-balance.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { seedProperty, seedReservation, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { createFolioService, folioBalanceOfReservation, type FolioService } from "../../src/modules/folio/index.ts";

let t: TestDatabase;
let folios: FolioService;
let hotel: SeededProperty;
const clock = new ManualClock("2026-11-22T10:00:00.000Z");

beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
  folios = createFolioService({ transact: t.transact, clock });
  hotel = await seedProperty(t.db.pool);
});
afterAll(async () => {
  await t?.close();
});

/** The stored balance of a folio next to the sum of its ledger. */
async function stored(folioId: string): Promise<{ stored: bigint; ledger: bigint }> {
  const { rows } = await t.db.pool.query<{ stored: string; ledger: string }>(
    `select f.balance_minor::text as stored,
            (coalesce((select sum(amount_minor) from folio_charges c where c.folio_id = f.id), 0)
             - coalesce((select sum(amount_minor) from folio_payments p where p.folio_id = f.id), 0))::text as ledger
       from folios f where f.id = $1`,
    [folioId],
  );
  return { stored: BigInt(rows[0]!.stored), ledger: BigInt(rows[0]!.ledger) };
}

async function newFolio() {
  const r = await seedReservation(t.db.pool, hotel, {
    arrival: "2026-11-22",
    departure: "2026-11-24",
    nightly: [100_00n, 120_00n],
  });
  return { r, f: await folios.getFolio(hotel.id, { reservationId: r.id }) };
}

const roomCharge = (r: { id: string; roomLineId: string }, businessDate: string) =>
  t.transact((tx) =>
    folios.postRoomCharge(tx, hotel.id, {
      reservationId: r.id,
      reservationRoomId: r.roomLineId,
      businessDate,
      amountMinor: 100_00n,
      description: "Room",
      actor: "night_audit:test",
    }),
  );

describe("stored folio balance", () => {
  it("equals the ledger after every kind of write: charge, room charge, repeated room charge, payment, reversal", async () => {
    const { r, f } = await newFolio();
    expect(await stored(f.id)).toEqual({ stored: 0n, ledger: 0n });
    await folios.postCharge(hotel.id, "user:u1", {
      folioId: f.id,
      code: "MINIBAR",
      description: "Water",
      amountMinor: 15_50n,
    });
    expect(await stored(f.id)).toEqual({ stored: 15_50n, ledger: 15_50n });
    expect(await roomCharge(r, "2026-11-22")).toBeDefined();
    expect(await stored(f.id)).toEqual({ stored: 115_50n, ledger: 115_50n });
    // The same night again is skipped: the balance does not count it twice.
    expect(await roomCharge(r, "2026-11-22")).toBeUndefined();
    expect(await stored(f.id)).toEqual({ stored: 115_50n, ledger: 115_50n });
    const pay = await folios.postPayment(hotel.id, "user:u1", {
      folioId: f.id,
      amountMinor: 115_50n,
      methodCode: "CASH",
    });
    expect(await stored(f.id)).toEqual({ stored: 0n, ledger: 0n });
    await folios.reversePayment(hotel.id, "user:u1", { paymentId: pay.id });
    expect(await stored(f.id)).toEqual({ stored: 115_50n, ledger: 115_50n });
    expect((await folios.getFolio(hotel.id, { folioId: f.id })).balanceMinor).toBe(115_50n);
    expect(await folioBalanceOfReservation(poolQueryable(t.db.pool), hotel.id, r.id)).toBe(115_50n);
  });

  it("stays equal to the ledger under concurrent charges, payments, reversals and room charges of one folio", async () => {
    const { r, f } = await newFolio();
    const first = await folios.postPayment(hotel.id, "user:u1", {
      folioId: f.id,
      amountMinor: 7_00n,
      methodCode: "CASH",
    });
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      writes.push(
        folios.postCharge(hotel.id, "user:u1", {
          folioId: f.id,
          code: "MINIBAR",
          description: "Water",
          amountMinor: BigInt(100 + i),
        }),
      );
      writes.push(
        folios.postPayment(hotel.id, "user:u1", { folioId: f.id, amountMinor: BigInt(50 + i), methodCode: "VISA" }),
      );
    }
    // Racing room charges of one night (one posts) and racing reversals of one payment (one succeeds).
    for (let i = 0; i < 4; i++) writes.push(roomCharge(r, "2026-11-23"));
    for (let i = 0; i < 4; i++) writes.push(folios.reversePayment(hotel.id, "user:u1", { paymentId: first.id }));
    const settled = await Promise.allSettled(writes);
    expect(settled.filter((s) => s.status === "rejected")).toHaveLength(3); // the three losing reversals
    const { stored: balance, ledger } = await stored(f.id);
    expect(balance).toBe(ledger);
    const charges = 12n * 100n + 66n + 100_00n;
    const payments = 12n * 50n + 66n;
    expect(balance).toBe(charges - payments);
  });

  it("is backfilled from the ledger by the migration", async () => {
    const { r, f } = await newFolio();
    await folios.postCharge(hotel.id, "user:u1", {
      folioId: f.id,
      code: "LAUNDRY",
      description: "Shirt",
      amountMinor: 40_00n,
    });
    await roomCharge(r, "2026-11-22");
    await folios.postPayment(hotel.id, "user:u1", { folioId: f.id, amountMinor: 30_00n, methodCode: "CASH" });
    // A folio as it was before the column existed (default 0), then the migration's backfill.
    await t.db.pool.query("update folios set balance_minor = 0 where id = $1", [f.id]);
    await t.db.pool.query(folioBalanceBackfillSql);
    expect(await stored(f.id)).toEqual({ stored: 110_00n, ledger: 110_00n });
  });
});
