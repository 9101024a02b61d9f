// The city ledger as it grows: the ageing report over 10,000 open debits (200 accounts, 50 each, dated over a year),
// through the service code on one embedded PostgreSQL; target p50 under 1 s. The debits are real settlements of
// folios made by the service for the first account; the rest are filled by SQL with the same shape (a bench of the
// report, not of settling).
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { seedReservation, seedRoomTypeAndRatePlan } from "../test/helpers/hotel-fixtures.ts";
import { benchDatabase } from "./harness.ts";

const ACCOUNTS = 200;
const ITEMS_PER_ACCOUNT = 50;
const RUNS = 15;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchCityLedger(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  try {
    const p = await app.services.admin.createProperty({
      groupCode: "BENCH",
      code: "LEDGER-BENCH",
      name: "City ledger bench",
      timeZone: "Europe/Istanbul",
      currency: "TRY",
      amountScale: 100,
      businessDate: "2027-06-30",
      emailVerification: false,
      sandbox: false,
    });
    const hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
    const { cityLedger, folios } = app.services;
    const accounts = [];
    for (let i = 0; i < ACCOUNTS; i++)
      accounts.push(
        await cityLedger.createAccount(p.id, {
          code: `ACC${i}`,
          name: `Account ${i}`,
          kind: i % 2 === 0 ? "COMPANY" : "AGENCY",
          creditLimitMinor: 10n ** 12n,
        }),
      );
    // the first account's debits through the service: real folios settled
    for (let k = 0; k < ITEMS_PER_ACCOUNT; k++) {
      const r = await seedReservation(app.db.pool, hotel, {
        arrival: "2027-06-01",
        departure: "2027-06-02",
        nightly: [1000_00n],
      });
      const folio = await folios.getFolio(p.id, { reservationId: r.id });
      await folios.postCharge(p.id, "user:bench", {
        folioId: folio.id,
        code: "MEETING",
        description: "Toplantı",
        amountMinor: BigInt(1000_00 + k),
      });
      await cityLedger.settleFolio(p.id, "user:bench", { folioId: folio.id, accountId: accounts[0]!.id });
    }
    // the others by SQL, the same shape: one folio per debit (the item references it), dates over the last year
    const folioIds = (
      await app.db.pool.query<{ folio_id: string }>(
        `select folio_id from ledger_items where property_id = $1 and kind = 'FOLIO'`,
        [p.id],
      )
    ).rows.map((r) => r.folio_id);
    await app.db.pool.query(
      `insert into ledger_items (property_id, id, account_id, kind, folio_id, amount_minor, open_minor, business_date, reference, posted_at, posted_by)
       select $1, gen_random_uuid(), a.id, 'FOLIO', ($2::uuid[])[1 + (g % array_length($2::uuid[], 1))],
              100000 + g, 100000 + g - (g % 3) * 1000, date '2027-06-30' - (g % 365), 'bench', now(), 'user:bench'
       from unnest($3::uuid[]) as a(id), generate_series(1, $4::int) g`,
      [p.id, folioIds, accounts.slice(1).map((a) => a.id), ITEMS_PER_ACCOUNT],
    );
    await app.db.pool.query(
      `update ledger_accounts a set balance_minor = (select coalesce(sum(open_minor), 0) from ledger_items i
         where i.property_id = a.property_id and i.account_id = a.id) where a.property_id = $1`,
      [p.id],
    );
    await app.db.pool.query(`analyze ledger_items`);
    const [{ n } = { n: "0" }] = (
      await app.db.pool.query<{ n: string }>(
        `select count(*)::text as n from ledger_items where property_id = $1 and open_minor > 0`,
        [p.id],
      )
    ).rows;
    const ms: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const t = performance.now();
      const report = await cityLedger.ageing(p.id);
      ms.push(performance.now() - t);
      if (report.accounts.length !== ACCOUNTS) throw new Error(`ageing: ${report.accounts.length} accounts`);
    }
    const v = p50(ms);
    console.log("measure                                        p50      target");
    console.log(
      `${`ageing report, ${n} open items`.padEnd(46)} ${`${v.toFixed(1)} ms`.padStart(8)}  < 1000 ms ${v < 1000 ? "" : "MISSED"}`,
    );
  } finally {
    await app.close();
    await database.stop();
  }
}
