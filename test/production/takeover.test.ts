import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { queues, takeoverBounds } from "../../src/jobs/queues.ts";
import { startPgCluster, type PgCluster } from "../../scripts/pg-cluster.ts";
import { startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.ts";
import { killAllServices, startService, until } from "../helpers/service-process.ts";
import { partnerHotel, type smallHotel } from "../helpers/small-hotel.ts";
import { testSecretKey } from "../helpers/webhooks.ts";

// How soon a partner message in flight runs again after a 10 s database outage and after its worker is killed, on
// the real clock, with the service started from deploy/ (units, environment file, PgBouncer in transaction mode).
// The bounds are the ones src/jobs/queues.ts states (takeoverBounds) and docs/operations/workers-and-pgbouncer.md
// documents.
const bound = takeoverBounds[queues.partnerMessages];
if (bound === "next run") throw new Error("partner messages have a takeover bound");

let cluster: PgCluster;
let bouncer: PgBouncer;
let admin: App;
let hotel: Awaited<ReturnType<typeof smallHotel>>;
let partner: { accessToken: string };
let env: Record<string, string>;
const held: pg.Client[] = [];

beforeAll(async () => {
  cluster = await startPgCluster();
  const boot = new pg.Client({ connectionString: cluster.url() });
  await boot.connect();
  await boot.query("create database hotelops");
  await boot.end();
  bouncer = await startPgBouncer(cluster.port);
  env = {
    DATABASE_URL: bouncer.url,
    DATABASE_DIRECT_URL: cluster.url("hotelops"),
    DATA_DIR: mkdtempSync(join(tmpdir(), "takeover-data-")),
    WEBHOOK_SECRET_KEY: testSecretKey,
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
    for (const c of held) await c.end().catch(() => undefined);
    await admin?.close();
  } finally {
    bouncer?.remove();
    cluster?.remove();
    if (env?.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
  }
});

/** A NEW partner message over REST; resolves with its id once accepted (202). */
async function sendNew(base: string, reference: string, night: number): Promise<string> {
  const arrival = new Date(Date.UTC(2027, 2, 1 + night));
  const departure = new Date(arrival.getTime() + 86_400_000);
  const res = await fetch(`${base}/api/v1/properties/${hotel.property.code}/reservation-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${partner.accessToken}`,
      "content-type": "application/json",
      "idempotency-key": `${reference}-NEW`,
    },
    body: JSON.stringify({
      eventType: "NEW",
      externalReference: reference,
      arrivalDate: arrival.toISOString().slice(0, 10),
      departureDate: departure.toISOString().slice(0, 10),
      currency: "TRY",
      holder: { name: "Guest Takeover" },
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
      totalMinor: 25000,
    }),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`NEW ${reference}: ${res.status} ${text}`);
  return (JSON.parse(text) as { eventId: string }).eventId;
}

/** A process's /metrics text. */
const scrape = async (base: string): Promise<string> => {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
};

/** The message's status, read directly from PostgreSQL (undefined while it cannot be reached). */
async function status(id: string): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: cluster.url("hotelops") });
  c.on("error", () => undefined);
  try {
    await c.connect();
    return (await c.query<{ status: string }>("select status from partner_messages where id = $1", [id])).rows[0]
      ?.status;
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The booking's jobs as pg-boss holds them (for a failure's message). */
async function jobsOf(reference: string): Promise<string> {
  const c = new pg.Client({ connectionString: cluster.url("hotelops") });
  c.on("error", () => undefined);
  try {
    await c.connect();
    const { rows } = await c.query(
      `select state, retry_count, retry_limit, start_after, started_on, heartbeat_on, output from pgboss.job
       where name = $1 and data->>'externalReference' = $2`,
      [queues.partnerMessages, reference],
    );
    return JSON.stringify(rows);
  } catch (err) {
    return String(err);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Holds the booking's lock on a direct connection, so the worker that takes its job waits in it (job in flight). */
async function holdBookingLock(reference: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: cluster.url("hotelops") });
  c.on("error", () => undefined);
  held.push(c);
  await c.connect();
  await c.query("select pg_advisory_lock(hashtext('reservation-events'), hashtext($1 || ':' || $2))", [
    hotel.property.id,
    reference,
  ]);
  return c;
}

/** Resolves once a job of the booking is active and its worker waits for the lock. */
async function inFlight(lock: pg.Client, reference: string): Promise<void> {
  await until(
    async () =>
      (
        await lock.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted
             and objid = ((hashtext($1 || ':' || $2)::bigint + 4294967296) % 4294967296)::oid`,
          [hotel.property.id, reference],
        )
      ).rows[0]!.n > 0,
    30_000,
    "a worker waits for the booking lock",
  );
}

describe(`partner messages: done within ${bound.afterOutage} s of a database outage's end and ${bound.afterKill} s of a worker's kill`, () => {
  it(
    "a message in flight when PostgreSQL stops for 10 s is applied once within the bound after it is back",
    { timeout: 90_000 },
    async () => {
      const api = await startService({ ...env, ROLE: "api" }, { envFile: true });
      const worker = await startService({ ...env, ROLE: "worker" }, { envFile: true });
      const reference = `OUTAGE-${Date.now()}`;
      const lock = await holdBookingLock(reference);
      const sent = performance.now();
      const id = await sendNew(api.base, reference, 1);
      await inFlight(lock, reference);
      // what an on-call sees (the worker's METRICS_PORT; in production /metrics is off the public port)
      expect((await fetch(`${api.base}/metrics`)).status).toBe(404);
      const held = await scrape(worker.metricsBase!);
      expect(held).toMatch(
        /^hotelops_job_running_longest_seconds\{queue="connectivity\.reservation-events"\} [0-9.]+$/m,
      );
      expect(held).toMatch(/^hotelops_partner_messages_queued 1$/m);
      expect(held).toMatch(/^hotelops_database_up 1$/m);
      // a fast shutdown ends every session (the lock's too): the job's statement fails mid-flight
      cluster.stop();
      const stopped = performance.now();
      expect(await scrape(worker.metricsBase!)).toMatch(/^hotelops_database_up 0$/m);
      await new Promise((r) => setTimeout(r, 10_000 - (performance.now() - stopped)));
      cluster.start();
      const back = performance.now();
      await until(async () => ((await status(id)) ?? "QUEUED") !== "QUEUED", 45_000, "the message applied").catch(
        async (err: unknown) => {
          throw new Error(`${String(err)}: ${await jobsOf(reference)}\n${worker.output()}`);
        },
      );
      const afterBack = (performance.now() - back) / 1000;
      expect(await status(id)).toBe("PROCESSED");
      const endToEnd = (performance.now() - sent) / 1000;
      console.log(
        `outage: applied ${afterBack.toFixed(1)} s after the database was back (${endToEnd.toFixed(1)} s end to end)`,
      );
      expect(afterBack, worker.output()).toBeLessThan(bound.afterOutage);
      const c = new pg.Client({ connectionString: cluster.url("hotelops") });
      await c.connect();
      const { rows } = await c.query<{ n: number }>(
        "select count(*)::int as n from reservations where property_id = $1 and external_reference = $2",
        [hotel.property.id, reference],
      );
      await c.end();
      expect(rows[0]!.n).toBe(1);
      const after = await scrape(worker.metricsBase!);
      expect(after).toMatch(/^hotelops_partner_messages_total\{outcome="PROCESSED"\} 1$/m);
      expect(after).toMatch(/^hotelops_partner_message_lag_seconds_count 1$/m);
      expect(after).toMatch(/^hotelops_job_duration_seconds_count\{queue="connectivity\.reservation-events"\} [1-9]/m);
      expect(after).toMatch(/^hotelops_database_up 1$/m);
      expect([api.child.exitCode, worker.child.exitCode]).toEqual([null, null]);
      for (const p of [api, worker]) p.child.kill("SIGTERM");
      for (const p of [api, worker]) expect(await p.exited, p.output()).toBe(0);
    },
  );

  it(
    "a message whose worker is killed (kill -9) mid-job is applied once by another worker within the bound",
    { timeout: 90_000 },
    async () => {
      const reference = `KILL-${Date.now()}`;
      const lock = await holdBookingLock(reference);
      const first = await startService({ ...env, ROLE: "worker" }, { envFile: true });
      const id = await sendNew(`http://127.0.0.1:${admin.port}`, reference, 3);
      await inFlight(lock, reference);
      const second = await startService({ ...env, ROLE: "worker" }, { envFile: true });
      first.child.kill("SIGKILL");
      await first.exited;
      const killed = performance.now();
      await lock.end();
      await until(async () => ((await status(id)) ?? "QUEUED") !== "QUEUED", 45_000, "the message applied").catch(
        async (err: unknown) => {
          throw new Error(`${String(err)}: ${await jobsOf(reference)}\n${second.output()}`);
        },
      );
      const seconds = (performance.now() - killed) / 1000;
      expect(await status(id)).toBe("PROCESSED");
      console.log(`kill -9: applied ${seconds.toFixed(1)} s after the kill`);
      expect(seconds, second.output()).toBeLessThan(bound.afterKill);
      const { rows } = await admin.deps.db.pool.query<{ n: number }>(
        "select count(*)::int as n from reservations where property_id = $1 and external_reference = $2",
        [hotel.property.id, reference],
      );
      expect(rows[0]!.n).toBe(1);
      second.child.kill("SIGTERM");
      expect(await second.exited, second.output()).toBe(0);
    },
  );
});
