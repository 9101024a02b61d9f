// Cost as the history grows: the same measures on a demo-sized database, then again after three years of history
// are written in bulk (bench/growth-fill.ts), in the same run. Targets: every latency within 1.25x of the small
// database, creates/s within 0.8x, the purge never blocking a delivery more than 100 ms.
// BENCH_GROWTH_SCALE (default 1: 200 properties, 2M reservations, 20M day rows, 5M attempts, 1M events) scales
// the number of properties; BENCH_SECONDS the create phase.
import pg from "pg";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { newId } from "../src/lib/ids.ts";
import { addDays } from "../src/lib/dates.ts";
import { createInventoryService } from "../src/modules/inventory/index.ts";
import { changeFeed, changeFeedHead, createReservationService } from "../src/modules/reservations/index.ts";
import { createStatsService, createReportsService } from "../src/modules/reports/index.ts";
import { createNightAuditService } from "../src/modules/night-audit/index.ts";
import { poolQueryable } from "../src/db/queryable.ts";
import { insertClaimed, purgeBefore, recordSuccesses } from "../src/modules/webhooks/deliveries.repository.ts";
import { createLoop } from "./creates.ts";
import { benchDatabase } from "./harness.ts";
import { fillHistory, fillPrices, fillProperties, fullDays, fullWindow } from "./growth-fill.ts";

const businessDate = "2026-11-22";
const clients = 50;
const fullProperties = 200;

interface Figure {
  name: string;
  value: number;
  unit: "ms" | "/s" | "MiB";
  /** What the grown value may be relative to the small one (latency <= 1.25x, throughput >= 0.8x). */
  target?: { max?: number; min?: number };
}

export async function benchGrowth(): Promise<void> {
  const scale = Number(process.env.BENCH_GROWTH_SCALE ?? 1);
  const properties = Math.max(2, Math.round(fullProperties * scale));
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  try {
    const deps = { transact: app.deps.transact, pool: app.deps.db.pool, clock: app.deps.clock };
    await fillProperties(pool, 1, 1, businessDate);
    const { rows } = await pool.query<{ id: string }>("select id from properties where code = 'GR0001'");
    const propertyId = rows[0]!.id;
    await fillPrices(pool, propertyId, businessDate);
    // The demo-sized database: one hotel with its last year (a report's range), the next 90 days and its webhook history.
    const recent = { from: -400, to: fullWindow.to };
    const log = (line: string) => console.log(line);
    await fillHistory(
      pool,
      1,
      1,
      businessDate,
      { arrivals: recent, days: { from: -401, to: 400 }, deliveries: true },
      log,
    );
    const small = await measure(deps, database.url, pool, propertyId, seconds);

    console.log(`filling ${properties} properties of history (BENCH_GROWTH_SCALE=${scale})...`);
    const started = performance.now();
    await fillProperties(pool, 2, properties, businessDate);
    // The measured hotel gets its three years before; the others their whole history.
    await fillHistory(
      pool,
      1,
      1,
      businessDate,
      { arrivals: { from: fullWindow.from, to: recent.from }, days: fullDays, deliveries: false },
      log,
    );
    await fillHistory(
      pool,
      2,
      properties,
      businessDate,
      { arrivals: fullWindow, days: fullDays, deliveries: true },
      log,
    );
    const fillSeconds = (performance.now() - started) / 1000;
    const counts = await pool.query<Record<string, string>>(
      `select (select count(*) from reservations) as reservations, (select count(*) from room_type_days) as days,
              (select count(*) from webhook_attempts) as attempts, (select count(*) from domain_events) as events`,
    );
    console.log(`filled in ${fillSeconds.toFixed(0)} s: ${JSON.stringify(counts.rows[0])}`);
    const grown = await measure(deps, database.url, pool, propertyId, seconds);

    console.log(
      `\n${"measure".padEnd(52)} ${"small".padStart(10)} ${"grown".padStart(10)} ${"ratio".padStart(7)} target`,
    );
    for (const [i, s] of small.entries()) {
      const g = grown[i]!;
      const ratio = g.value / Math.max(s.value, 0.001);
      const verdict =
        s.target === undefined
          ? ""
          : s.target.max !== undefined
            ? `<= ${s.target.max}x ${ratio <= s.target.max ? "met" : "MISSED"}`
            : `>= ${s.target.min}x ${ratio >= s.target.min! ? "met" : "MISSED"}`;
      console.log(
        `${`${s.name} ${s.unit}`.padEnd(52)} ${s.value.toFixed(s.unit === "ms" ? 2 : 0).padStart(10)} ${g.value.toFixed(s.unit === "ms" ? 2 : 0).padStart(10)} ${ratio.toFixed(2).padStart(7)} ${verdict}`,
      );
    }
    const purgeWait = grown.find((f) => f.name.startsWith("longest lock wait"))!.value;
    console.log(
      `fill ${fillSeconds.toFixed(0)} s for ${properties} properties; purge: longest lock wait of a delivery ${purgeWait.toFixed(0)} ms (target <= 100 ms: ${purgeWait <= 100 ? "met" : "MISSED"})`,
    );
  } finally {
    await pool.end();
    await app.close();
    await database.stop();
  }
}

type BenchDeps = { transact: import("../src/db/transaction.ts").Transact; pool: pg.Pool; clock: { now(): Date } };

async function measure(
  deps: BenchDeps,
  url: string,
  pool: pg.Pool,
  propertyId: string,
  seconds: number,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  const latency = async (name: string, runs: number, work: () => Promise<unknown>) => {
    const { p50 } = await latencies(runs, work);
    figures.push({ name, value: p50, unit: "ms", target: { max: 1.25 } });
  };
  const inventory = createInventoryService(deps);
  const reservations = createReservationService(deps);
  const stats = createStatsService({ pool: deps.pool });
  const reports = createReportsService({ pool: deps.pool, clock: deps.clock });
  // the checks read only: a run (folios, no-shows) is not measured here
  const audit = createNightAuditService({ ...deps, folios: undefined as never, markNoShow: undefined as never });

  // --- creates: 50 clients over the next 360 days of every room type ---
  const types = (
    await pool.query<{ id: string; rp: string }>(
      `select rt.id, x.rate_plan_id as rp from room_types rt join rate_plan_room_types x on x.property_id = rt.property_id and x.room_type_id = rt.id
        where rt.property_id = $1 order by rt.code`,
      [propertyId],
    )
  ).rows;
  const start = Math.floor(Math.random() * 1000);
  const outcome = await createLoop(reservations, propertyId, {
    seconds,
    clients,
    holderName: "Growth Guest",
    stay: (n) => {
      const i = start + n;
      const arrival = addDays(businessDate, 1 + (i % 359));
      const t = types[(i * 7) % types.length]!;
      return { roomTypeId: t.id, ratePlanId: t.rp, arrival, departure: addDays(arrival, 1 + (i % 3)) };
    },
  });
  if (outcome.other > 0) throw outcome.firstOther;
  const rate = outcome.rate;
  figures.push({ name: "reservation creates, 50 clients", value: rate, unit: "/s", target: { min: 0.8 } });
  console.log(`creates: ${outcome.ok} ok, ${outcome.noAvailability} no_availability`);

  // --- the connectivity reservation feed: first page, a page deep in history, a partner resuming near the head ---
  const q = poolQueryable(deps.pool);
  const head = await changeFeedHead(q, propertyId);
  const page = (after: bigint) => async () => {
    await changeFeedHead(q, propertyId);
    const rows = await changeFeed(q, propertyId, after, undefined, 101);
    if (rows.length === 0) throw new Error("empty feed page");
  };
  await latency("feed first page (100)", 100, page(0n));
  await latency("feed page deep in history (100)", 100, page(head / 2n));
  await latency("feed resume from a cursor near the head", 100, page(head > 20n ? head - 20n : 0n));

  // --- availability, mobile dashboard and forecast ---
  await latency("availability 50 types x 366 days", 50, () =>
    inventory.getAvailability(propertyId, { from: businessDate, to: addDays(businessDate, 366) }),
  );
  await latency("mobile dashboard", 100, () => stats.dashboard(propertyId));
  await latency("mobile forecast (this month)", 100, () =>
    stats.forecast(propertyId, { year: 2026, month: 11, includeOptions: false }),
  );

  // --- every report over the past year, the night audit's checks ---
  const user = await staffSession(pool, propertyId);
  for (const report of reports.catalogue())
    await latency(`report ${report.id} over a year`, 20, () =>
      reports.run(propertyId, user, { reportId: report.id, start: addDays(businessDate, -365), end: businessDate }),
    );
  await latency("night audit checks", 50, () => audit.getChecks(propertyId));

  // --- the 30-day webhook history purge (every property), with deliveries recorded meanwhile ---
  const purge = await purgeWithDeliveries(url, deps.pool, propertyId);
  figures.push({ name: "purge of the 30-day history", value: purge.ms, unit: "ms" });
  figures.push({ name: "longest lock wait of a delivery during purge", value: purge.longestLockWaitMs, unit: "ms" });
  figures.push({ name: "longest delivery write during purge", value: purge.longestDeliveryMs, unit: "ms" });
  console.log(`purge deleted ${purge.attempts} attempts and ${purge.deliveries} deliveries`);

  const size = await pool.query<{ bytes: string }>("select pg_database_size(current_database())::text as bytes");
  figures.push({ name: "database size", value: Number(size.rows[0]!.bytes) / 1024 / 1024, unit: "MiB" });
  return figures;
}

/** A staff member and session of the property (a report run is recorded under them). */
async function staffSession(pool: pg.Pool, propertyId: string): Promise<{ userId: string; sessionId: string }> {
  const userId = newId();
  const sessionId = newId();
  await pool.query("insert into users (id, email, password_hash) values ($1, $2, 'x')", [
    userId,
    `${userId}@growth.test`,
  ]);
  await pool.query(
    "insert into staff_sessions (id, user_id, property_id, created_at, expires_at) values ($1, $2, $3, now(), now() + interval '1 day')",
    [sessionId, userId, propertyId],
  );
  return { userId, sessionId };
}

/**
 * Runs the purge while 4 writers record deliveries the way the engine does (claim, then record the success), on
 * connections of their own. A poller samples pg_stat_activity every 10 ms for those writers waiting on a lock:
 * the longest wait seen is the purge's blocking. Returns it with the purge's duration and the longest delivery
 * write while the purge ran (lock waits and everything else the busy database adds).
 */
async function purgeWithDeliveries(
  url: string,
  pool: pg.Pool,
  propertyId: string,
): Promise<{ ms: number; longestDeliveryMs: number; longestLockWaitMs: number; attempts: number; deliveries: number }> {
  const { rows } = await pool.query<{ id: string }>("select id from webhook_endpoints where property_id = $1 limit 1", [
    propertyId,
  ]);
  const endpointId = rows[0]!.id;
  const writers = new pg.Pool({ connectionString: url, max: 4, application_name: "growth-delivery" });
  let running = true;
  let longest = 0;
  const writer = async () => {
    while (running) {
      const t = performance.now();
      const now = new Date();
      const [c] = await insertClaimed(
        writers,
        [{ event_id: newId(), property_id: propertyId, type: "reservation.created", endpoint_id: endpointId }],
        now,
        new Date(now.getTime() + 60_000),
      );
      await recordSuccesses(
        writers,
        [
          {
            c: c!,
            result: { httpStatus: 200, durationMs: 5, errorClass: null, errorMessage: null },
            finishedAt: new Date(),
          },
        ],
        now,
      );
      longest = Math.max(longest, performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const waits = new Map<string, { first: number; last: number }>();
  const poller = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      while (running) {
        const r = await c.query<{ key: string }>(
          "select pid || '/' || query_start as key from pg_stat_activity where application_name = 'growth-delivery' and wait_event_type = 'Lock'",
        );
        const at = performance.now();
        for (const { key } of r.rows) waits.set(key, { first: waits.get(key)?.first ?? at, last: at });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await c.end();
    }
  };
  const work = [...Array.from({ length: 4 }, writer), poller()];
  await new Promise((r) => setTimeout(r, 300));
  longest = 0;
  waits.clear();
  const t = performance.now();
  const purged = await purgeBefore(pool, new Date(Date.now() - 30 * 86_400_000));
  const ms = performance.now() - t;
  running = false;
  await Promise.all(work);
  await writers.end();
  // a wait seen in one sample lasted up to one sampling interval
  const longestLockWaitMs = Math.max(0, ...[...waits.values()].map((w) => w.last - w.first + 10));
  return { ms, longestDeliveryMs: longest, longestLockWaitMs, ...purged };
}

async function latencies(runs: number, work: () => Promise<unknown>): Promise<{ p50: number }> {
  for (let i = 0; i < 5; i++) await work();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(runs / 2)]! };
}
