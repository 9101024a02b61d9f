// Cost as the history grows: the same measures on a demo-sized database and on one holding three years of history
// written in bulk (bench/growth-fill.ts), two databases of one PostgreSQL server in the same run. Each measure
// alternates between them BENCH_ROUNDS times (default 3, the order swapped every round) and its ratio is the median
// of the rounds' ratios: on a shared box two phases minutes apart moved 1.5-2x. Targets: every latency within 1.25x
// of the small database, creates/s within 0.8x, the purge never blocking a delivery more than 100 ms.
// BENCH_GROWTH_SCALE (default 1: 200 properties, 2M reservations, 20M day rows, 5M attempts, 1M events) scales
// the number of properties; BENCH_SECONDS the create phase. BENCH_GROWTH_DIR=<dir> keeps the filled databases there: a
// later run with the same directory migrates and measures them without filling again.
import pg from "pg";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp, type App } from "../src/app.ts";
import { newId } from "../src/lib/ids.ts";
import { addDays } from "../src/lib/dates.ts";
import { createInventoryService } from "../src/modules/inventory/index.ts";
import { changeFeed, changeFeedHead, createReservationService, stayInRoom } from "../src/modules/reservations/index.ts";
import { createStatsService, createReportsService } from "../src/modules/reports/index.ts";
import { createNightAuditService } from "../src/modules/night-audit/index.ts";
import { poolQueryable } from "../src/db/queryable.ts";
import { insertClaimed, purgeBefore } from "../src/modules/webhooks/deliveries.repository.ts";
import { recordSuccesses } from "../src/modules/webhooks/attempts.repository.ts";
import { createLoop } from "./creates.ts";
import { benchDatabase, median } from "./harness.ts";
import { fillHistory, fillPrices, fillProperties, fullDays, fullWindow } from "./growth-fill.ts";

const businessDate = "2026-11-22";
const clients = 50;
const fullProperties = 200;
// The demo-sized database: one hotel with its last year (a report's range), the next 90 days and its webhook history.
const recent = { from: -400, to: fullWindow.to };

interface Figure {
  name: string;
  small: number;
  grown: number;
  /** grown / small: the median of the rounds' ratios where the measure alternates. */
  ratio: number;
  unit: "ms" | "/s" | "MiB";
  /** What the grown value may be relative to the small one (latency <= 1.25x, throughput >= 0.8x). */
  target?: { max?: number; min?: number };
}

/** One database of the comparison: an app (its services), a pool, the measured hotel. */
interface Side {
  url: string;
  app: App;
  pool: pg.Pool;
  deps: BenchDeps;
  propertyId: string;
}

export async function benchGrowth(): Promise<void> {
  const scale = Number(process.env.BENCH_GROWTH_SCALE ?? 1);
  const properties = Math.max(2, Math.round(fullProperties * scale));
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const keepDir = process.env.BENCH_GROWTH_DIR;
  const database = await benchDatabase(keepDir);
  const sides: Side[] = [];
  try {
    const kept = keepDir === undefined ? undefined : await fillNote(database.url);
    let filled = kept;
    if (kept !== undefined) {
      console.log(`reusing the filled databases in ${keepDir} (${kept}): migrated, not filled again`);
      for (const url of [databaseUrl(database.url, "growth_small"), database.url])
        sides.push(await openSide(url, false));
    } else {
      const fillSeconds = await fill(database.url, properties, scale, sides);
      filled = `${properties} properties filled in ${fillSeconds.toFixed(0)} s`;
      if (keepDir !== undefined) await noteFill(database.url, filled);
    }
    const [small, grown] = sides as [Side, Side];
    const figures = await compare(small, grown, rounds, seconds);

    console.log(
      `\n${"measure".padEnd(52)} ${"small".padStart(10)} ${"grown".padStart(10)} ${"ratio".padStart(7)} target`,
    );
    for (const f of figures) {
      const verdict =
        f.target === undefined
          ? ""
          : f.target.max !== undefined
            ? `<= ${f.target.max}x ${f.ratio <= f.target.max ? "met" : "MISSED"}`
            : `>= ${f.target.min}x ${f.ratio >= f.target.min! ? "met" : "MISSED"}`;
      const digits = f.unit === "ms" ? 2 : 0;
      console.log(
        `${`${f.name} ${f.unit}`.padEnd(52)} ${f.small.toFixed(digits).padStart(10)} ${f.grown.toFixed(digits).padStart(10)} ${f.ratio.toFixed(2).padStart(7)} ${verdict}`,
      );
    }
    const purgeWait = figures.find((f) => f.name.startsWith("longest lock wait"))!.grown;
    console.log(
      `${filled}; ${rounds} rounds; purge: longest lock wait of a delivery ${purgeWait.toFixed(0)} ms (target <= 100 ms: ${purgeWait <= 100 ? "met" : "MISSED"})`,
    );
  } finally {
    for (const side of sides) {
      await side.pool.end();
      await side.app.close();
    }
    await database.stop();
  }
}

/**
 * The small database (`growth_small`: the first hotel's recent history) and the grown one (`url`: the same, then
 * `properties` hotels of three years); the two sides are pushed to `sides`. Returns the grown fill's seconds.
 */
async function fill(url: string, properties: number, scale: number, sides: Side[]): Promise<number> {
  for (const sideUrl of [await createDatabase(url, "growth_small"), url]) {
    const side = await openSide(sideUrl, true);
    sides.push(side);
    await fillHistory(
      side.pool,
      1,
      1,
      businessDate,
      { arrivals: recent, days: { from: -401, to: 400 }, deliveries: true },
      () => undefined,
    );
  }
  const [, grown] = sides as [Side, Side];

  console.log(`filling ${properties} properties of history (BENCH_GROWTH_SCALE=${scale})...`);
  const started = performance.now();
  const log = (line: string) => console.log(line);
  await fillProperties(grown.pool, 2, properties, businessDate);
  // The measured hotel gets its three years before; the others their whole history.
  await fillHistory(
    grown.pool,
    1,
    1,
    businessDate,
    { arrivals: { from: fullWindow.from, to: recent.from }, days: fullDays, deliveries: false },
    log,
  );
  await fillHistory(
    grown.pool,
    2,
    properties,
    businessDate,
    { arrivals: fullWindow, days: fullDays, deliveries: true },
    log,
  );
  const fillSeconds = (performance.now() - started) / 1000;
  const counts = await grown.pool.query<Record<string, string>>(
    `select (select count(*) from reservations) as reservations, (select count(*) from room_type_days) as days,
            (select count(*) from webhook_attempts) as attempts, (select count(*) from domain_events) as events`,
  );
  console.log(`filled in ${fillSeconds.toFixed(0)} s: ${JSON.stringify(counts.rows[0])}`);
  return fillSeconds;
}

type BenchDeps = { transact: import("../src/db/transaction.ts").Transact; pool: pg.Pool; clock: { now(): Date } };

/** A new database on the server of `url` (same credentials); its URL. */
async function createDatabase(url: string, name: string): Promise<string> {
  await withClient(url, (c) => c.query(`create database ${c.escapeIdentifier(name)}`));
  return databaseUrl(url, name);
}

/** The URL of database `name` on the server of `url`. */
function databaseUrl(url: string, name: string): string {
  const other = new URL(url);
  other.pathname = `/${name}`;
  return other.toString();
}

async function withClient<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

/**
 * A finished fill in a kept directory (BENCH_GROWTH_DIR) is noted on the grown database (`comment on database`):
 * the note, or undefined for a new directory. A directory whose fill never finished is refused.
 */
async function fillNote(url: string): Promise<string | undefined> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ note: string | null; small: boolean }>(
      `select shobj_description(oid, 'pg_database') as note, exists (select 1 from pg_database where datname = 'growth_small') as small
         from pg_database where datname = current_database()`,
    );
    const { note, small } = rows[0]!;
    if (note === null && small) throw new Error("BENCH_GROWTH_DIR holds a fill that did not finish: remove it");
    return note ?? undefined;
  });
}

async function noteFill(url: string, note: string): Promise<void> {
  await withClient(url, (c) =>
    c.query(`comment on database ${c.escapeIdentifier(c.database!)} is ${c.escapeLiteral(note)}`),
  );
}

/** The app on `url` (it migrates the schema); a `fresh` database first gets the first hotel with its prices. */
async function openSide(url: string, fresh: boolean): Promise<Side> {
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  if (fresh) await fillProperties(pool, 1, 1, businessDate);
  const { rows } = await pool.query<{ id: string }>("select id from properties where code = 'GR0001'");
  const propertyId = rows[0]!.id;
  if (fresh) await fillPrices(pool, propertyId, businessDate);
  const deps = { transact: app.deps.transact, pool: app.deps.db.pool, clock: app.deps.clock };
  return { url, app, pool, deps, propertyId };
}

/** A latency measure of one side: `runs` calls of `work` in all, spread over the rounds. */
interface Probe {
  name: string;
  runs: number;
  work: () => Promise<unknown>;
}

/** Every measure on both sides, alternating where a measure can be repeated; the purge and the size once each. */
async function compare(small: Side, grown: Side, rounds: number, seconds: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  /** Runs one round of `run` on each side, `rounds` times, the order swapped every round. */
  const alternate = async (run: (side: Side) => Promise<number>) => {
    const values: [number, number][] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [small, grown] : [grown, small];
      const got = new Map<Side, number>();
      for (const side of order) got.set(side, await run(side));
      values.push([got.get(small)!, got.get(grown)!]);
    }
    return {
      small: median(values.map((v) => v[0])),
      grown: median(values.map((v) => v[1])),
      ratio: median(values.map((v) => v[1] / Math.max(v[0], 0.001))),
    };
  };

  // --- creates: 50 clients over the next 360 days of every room type ---
  const creates = await alternate((side) => createsPerSecond(side, seconds));
  figures.push({ name: "reservation creates, 50 clients", unit: "/s", target: { min: 0.8 }, ...creates });

  const probes = new Map<Side, Probe[]>([
    [small, await probesOf(small)],
    [grown, await probesOf(grown)],
  ]);
  for (const [i, probe] of probes.get(small)!.entries()) {
    const runs = Math.max(10, Math.ceil(probe.runs / rounds));
    const p50s = await alternate((side) => p50(runs, probes.get(side)![i]!.work));
    figures.push({ name: probe.name, unit: "ms", target: { max: 1.25 }, ...p50s });
  }

  // --- the 30-day webhook history purge (every property), with deliveries recorded meanwhile: once, it deletes ---
  const purges = [await purgeWithDeliveries(small), await purgeWithDeliveries(grown)] as const;
  const once = (name: string, unit: Figure["unit"], [s, g]: readonly [number, number]): Figure => ({
    name,
    unit,
    small: s,
    grown: g,
    ratio: g / Math.max(s, 0.001),
  });
  figures.push(once("purge of the 30-day history", "ms", [purges[0].ms, purges[1].ms]));
  figures.push(
    once("longest lock wait of a delivery during purge", "ms", [
      purges[0].longestLockWaitMs,
      purges[1].longestLockWaitMs,
    ]),
  );
  figures.push(
    once("longest delivery write during purge", "ms", [purges[0].longestDeliveryMs, purges[1].longestDeliveryMs]),
  );
  console.log(`purge deleted ${purges[1].attempts} attempts and ${purges[1].deliveries} deliveries (grown)`);
  figures.push(once("database size", "MiB", [await sizeMiB(small), await sizeMiB(grown)]));
  return figures;
}

async function createsPerSecond(side: Side, seconds: number): Promise<number> {
  const reservations = createReservationService(side.deps);
  const types = (
    await side.pool.query<{ id: string; rp: string }>(
      `select rt.id, x.rate_plan_id as rp from room_types rt join rate_plan_room_types x on x.property_id = rt.property_id and x.room_type_id = rt.id
        where rt.property_id = $1 order by rt.code`,
      [side.propertyId],
    )
  ).rows;
  const start = Math.floor(Math.random() * 1000);
  const outcome = await createLoop(reservations, side.propertyId, {
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
  return outcome.rate;
}

/** The latency measures of one side, in the same order on both. */
async function probesOf(side: Side): Promise<Probe[]> {
  const { deps, propertyId } = side;
  const inventory = createInventoryService({ ...deps, stayInRoom });
  const stats = createStatsService({ pool: deps.pool });
  const reports = createReportsService({ pool: deps.pool, clock: deps.clock });
  // the checks read only: a run (folios, no-shows) is not measured here
  const audit = createNightAuditService({ ...deps, folios: undefined as never, markNoShow: undefined as never });
  const user = await staffSession(side.pool, propertyId);

  // the connectivity reservation feed: first page, a page deep in history, a partner resuming near the head
  const q = poolQueryable(deps.pool);
  const head = await changeFeedHead(q, propertyId);
  const page = (after: bigint) => async () => {
    await changeFeedHead(q, propertyId);
    const rows = await changeFeed(q, propertyId, after, undefined, 101);
    if (rows.length === 0) throw new Error("empty feed page");
  };
  return [
    { name: "feed first page (100)", runs: 100, work: page(0n) },
    { name: "feed page deep in history (100)", runs: 100, work: page(head / 2n) },
    { name: "feed resume from a cursor near the head", runs: 100, work: page(head > 20n ? head - 20n : 0n) },
    {
      name: "availability 50 types x 366 days",
      runs: 50,
      work: () => inventory.getAvailability(propertyId, { from: businessDate, to: addDays(businessDate, 366) }),
    },
    { name: "mobile dashboard", runs: 100, work: () => stats.dashboard(propertyId) },
    {
      name: "mobile forecast (this month)",
      runs: 100,
      work: () => stats.forecast(propertyId, { year: 2026, month: 11, includeOptions: false }),
    },
    // every report over the past year, the night audit's checks
    ...reports.catalogue().map((report) => ({
      name: `report ${report.id} over a year`,
      runs: 20,
      work: () =>
        reports.run(propertyId, user, { reportId: report.id, start: addDays(businessDate, -365), end: businessDate }),
    })),
    { name: "night audit checks", runs: 50, work: () => audit.getChecks(propertyId) },
  ];
}

async function sizeMiB(side: Side): Promise<number> {
  const size = await side.pool.query<{ bytes: string }>("select pg_database_size(current_database())::text as bytes");
  return Number(size.rows[0]!.bytes) / 1024 / 1024;
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
async function purgeWithDeliveries({ url, pool, propertyId }: Side): Promise<{
  ms: number;
  longestDeliveryMs: number;
  longestLockWaitMs: number;
  attempts: number;
  deliveries: number;
}> {
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

/** The median time of `runs` calls (after 5 unmeasured ones). */
async function p50(runs: number, work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await work();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  return median(ms);
}
