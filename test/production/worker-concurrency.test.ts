import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { startPgCluster, type PgCluster } from "../../scripts/pg-cluster.ts";
import { startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.ts";
import { killAllServices, startService, until } from "../helpers/service-process.ts";
import { partnerHotel, type smallHotel } from "../helpers/small-hotel.ts";

// WORKER_CONCURRENCY: worker processes behind PgBouncer in transaction pooling mode drain several bookings at once,
// each booking's messages (NEW, MODIFIED x3, CANCELLED) still applied one after another in the order sent, each
// exactly once, also with two worker processes taking the same bookings' jobs.
let cluster: PgCluster;
let bouncer: PgBouncer;
let admin: App;
let hotel: Awaited<ReturnType<typeof smallHotel>>;
let partner: { accessToken: string };
let env: Record<string, string>;

beforeAll(async () => {
  cluster = await startPgCluster();
  const boot = new pg.Client({ connectionString: cluster.url() });
  await boot.connect();
  await boot.query("create database hotelops");
  await boot.end();
  // two workers of WORKER_CONCURRENCY 4: each drain holds its booking lock on one server connection and applies on
  // another (docs/operations/workers-and-pgbouncer.md)
  bouncer = await startPgBouncer(cluster.port, { default_pool_size: "24" });
  env = {
    DATABASE_URL: bouncer.url,
    DATABASE_DIRECT_URL: cluster.url("hotelops"),
    DATA_DIR: mkdtempSync(join(tmpdir(), "concurrency-data-")),
    RATE_LIMIT_PARTNER_PER_MINUTE: "100000",
  };
  admin = await createApp(
    loadConfig({ ...env, DATABASE_URL: cluster.url("hotelops"), ROLE: "api", PORT: "0", HOST: "127.0.0.1" }),
    { logger: pino({ level: "silent" }) },
  );
  ({ hotel, partner } = await partnerHotel(admin, `http://127.0.0.1:${admin.port}`));
}, 120_000);
afterAll(async () => {
  killAllServices();
  try {
    await admin?.close();
  } finally {
    bouncer?.remove();
    cluster?.remove();
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  }
});

const sql = async <R = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  (await admin.deps.db.pool.query(text, params)).rows as R[];

async function send(eventType: string, reference: string, night: number, holder: string): Promise<void> {
  const arrival = new Date(Date.UTC(2027, 2, 1 + night));
  const res = await fetch(
    `http://127.0.0.1:${admin.port}/api/v1/properties/${hotel.property.code}/reservation-events`,
    {
      method: "POST",
      headers: {
        authorization: `Bearer ${partner.accessToken}`,
        "content-type": "application/json",
        "idempotency-key": `${reference}-${eventType}-${holder.replace(" ", "")}`,
      },
      body: JSON.stringify({
        eventType,
        externalReference: reference,
        channel: "Booking.com",
        arrivalDate: arrival.toISOString().slice(0, 10),
        departureDate: new Date(arrival.getTime() + 86_400_000).toISOString().slice(0, 10),
        currency: "TRY",
        holder: { name: holder },
        notes: holder,
        rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
        totalMinor: 25000,
      }),
    },
  );
  if (res.status !== 202) throw new Error(`${eventType} ${reference}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** NEW, MODIFIED x3 (holders Guest 1..3), CANCELLED of each reference, each sent once the previous was accepted. */
async function sendLifecycles(references: string[], firstNight: number): Promise<void> {
  await Promise.all(
    references.map(async (reference, i) => {
      const night = firstNight + i;
      await send("NEW", reference, night, "Guest 0");
      for (const n of [1, 2, 3]) await send("MODIFIED", reference, night, `Guest ${n}`);
      await send("CANCELLED", reference, night, "Guest 3");
    }),
  );
}

/**
 * Every message of `references` applied once and in the order sent: PROCESSED after one attempt, processed_at
 * rising with arrival order per booking, the booking's outbound events (one per applied change) created, updated
 * three times, cancelled, in that order and no more, and the last modification's holder on the booking.
 */
async function expectAppliedOnceInOrder(references: string[]): Promise<void> {
  await until(
    async () =>
      (
        await sql<{ n: number }>(
          "select count(*)::int as n from partner_messages where external_reference = any($1) and status = 'QUEUED'",
          [references],
        )
      )[0]!.n === 0,
    90_000,
    "every message applied",
  );
  const messages = await sql<{ status: string; attempts: number; n: number }>(
    "select status, attempts, count(*)::int as n from partner_messages where external_reference = any($1) group by 1, 2",
    [references],
  );
  expect(messages).toEqual([{ status: "PROCESSED", attempts: 1, n: references.length * 5 }]);
  const backwards = await sql(
    `select external_reference from (
       select external_reference, processed_at < lag(processed_at) over (partition by external_reference order by seq) as back
         from partner_messages where external_reference = any($1)) x where back`,
    [references],
  );
  expect(backwards).toEqual([]);
  const events = await sql<{ reference: string; holder: string; changes: string[] }>(
    `select r.external_reference as reference, r.holder_name as holder, array_agg(e.type order by e.id) as changes
       from reservations r join domain_events e on e.property_id = r.property_id and e.data->>'id' = r.id::text
      where r.external_reference = any($1) group by 1, 2 order by 1`,
    [references],
  );
  expect(events).toEqual(
    [...references].sort().map((reference) => ({
      reference,
      holder: "Guest 3",
      changes: [
        "reservation.created",
        "reservation.updated",
        "reservation.updated",
        "reservation.updated",
        "reservation.cancelled",
      ],
    })),
  );
}

describe("WORKER_CONCURRENCY behind PgBouncer in transaction pooling mode", () => {
  it(
    "one worker drains a backlog of 30 bookings several at a time, then two workers take 30 more live: each message applied once, each booking in order",
    { timeout: 180_000 },
    async () => {
      const backlog = Array.from({ length: 30 }, (_, i) => `CONC-A${i}`);
      await sendLifecycles(backlog, 0);
      const workerEnv = { ...env, ROLE: "worker", WORKER_CONCURRENCY: "4", DATABASE_POOL_MAX: "12" };
      const first = await startService(workerEnv);
      await expectAppliedOnceInOrder(backlog);
      // bookings drained side by side in the one process: some booking's first and last outcome enclose another's
      const [overlap] = await sql<{ n: number }>(
        `with b as (select external_reference, min(processed_at) as a, max(processed_at) as z from partner_messages
                      where external_reference = any($1) group by 1)
         select count(*)::int as n from b x join b y on x.external_reference < y.external_reference and x.a < y.z and y.a < x.z`,
        [backlog],
      );
      expect(overlap!.n).toBeGreaterThan(0);

      const second = await startService(workerEnv);
      const live = Array.from({ length: 30 }, (_, i) => `CONC-B${i}`);
      await sendLifecycles(live, 30);
      await expectAppliedOnceInOrder(live);
      await until(
        async () =>
          (
            await sql<{ n: number }>(
              "select count(*)::int as n from pg_locks where locktype = 'advisory' and objsubid = 2 and granted",
            )
          )[0]!.n === 0,
        5_000,
        "no booking lock held",
      );
      for (const p of [first, second]) p.child.kill("SIGTERM");
      for (const p of [first, second]) expect(await p.exited, p.output()).toBe(0);
    },
  );
});
