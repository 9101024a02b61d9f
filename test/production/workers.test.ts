import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { freePort, startPgCluster, type PgCluster } from "../../scripts/pg-cluster.ts";
import { renderHaproxyCfg } from "../helpers/deploy.ts";
import { startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.ts";
import { requireBinary } from "../helpers/prerequisites.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";
import { partnerHotel, type smallHotel } from "../helpers/small-hotel.ts";
import { testSecretKey } from "../helpers/webhooks.ts";

// Worker processes on a real PostgreSQL server behind Debian's PgBouncer in transaction pooling mode: the same
// booking changed several times, connections cut from outside, a stuck job at SIGTERM.
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
  bouncer = await startPgBouncer(cluster.port, { default_pool_size: "6" });
  env = {
    DATABASE_URL: bouncer.url,
    DATABASE_DIRECT_URL: cluster.url("hotelops"),
    DATA_DIR: mkdtempSync(join(tmpdir(), "workers-data-")),
    WEBHOOK_SECRET_KEY: testSecretKey,
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    RATE_LIMIT_ANON_PER_MINUTE: "100000",
    RATE_LIMIT_PARTNER_PER_MINUTE: "100000",
  };
  admin = await createApp(
    loadConfig({ ...env, DATABASE_URL: cluster.url("hotelops"), ROLE: "api", PORT: "0", HOST: "127.0.0.1" }),
    { logger: pino({ level: "silent" }) },
  );
  ({ hotel, partner } = await partnerHotel(admin, `http://127.0.0.1:${admin.port}`));
}, 120_000);
// a test that failed while PgBouncer was down leaves it down: the next one starts with it up
beforeEach(() => bouncer.start());
const heldLocks: pg.Client[] = [];
afterAll(async () => {
  killAllServices();
  try {
    for (const c of heldLocks) await c.end().catch(() => undefined);
    await admin?.close();
  } finally {
    bouncer?.remove();
    cluster?.remove();
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  }
});

const sql = async <R = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  (await admin.deps.db.pool.query(text, params)).rows as R[];

type EventType = "NEW" | "MODIFIED" | "CANCELLED";

/** POST a partner message over REST; resolves with its id once accepted (202). */
async function send(base: string, eventType: EventType, reference: string, night: number, holder: string) {
  const arrival = new Date(Date.UTC(2027, 2, 1 + night));
  const departure = new Date(arrival.getTime() + 86_400_000);
  const res = await fetch(`${base}/api/v1/properties/${hotel.property.code}/reservation-events`, {
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
      departureDate: departure.toISOString().slice(0, 10),
      currency: "TRY",
      holder: { name: holder },
      notes: holder,
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
      totalMinor: 25000,
    }),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`${eventType} ${reference}: ${res.status} ${text}`);
  return (JSON.parse(text) as { eventId: string }).eventId;
}

/** NEW, MODIFIED x3, CANCELLED of one booking, each sent once the previous one was accepted. */
async function lifecycle(base: string, reference: string, night: number): Promise<string[]> {
  const ids = [await send(base, "NEW", reference, night, "Guest 0")];
  for (const n of [1, 2, 3]) ids.push(await send(base, "MODIFIED", reference, night, `Guest ${n}`));
  ids.push(await send(base, "CANCELLED", reference, night, "Guest 3"));
  return ids;
}

async function statuses(ids: string[]): Promise<Record<string, number>> {
  const rows = await sql<{ status: string; n: number }>(
    "select status, count(*)::int as n from partner_messages where id = any($1) group by status",
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Every message of `references` PROCESSED and each booking cancelled with its last modification's holder. */
async function expectApplied(ids: string[], references: string[]): Promise<void> {
  await until(
    async () => (await statuses(ids)).QUEUED === undefined,
    90_000,
    `every message applied (${JSON.stringify(await statuses(ids))})`,
  );
  expect(await statuses(ids)).toEqual({ PROCESSED: ids.length });
  const bookings = await sql<{ external_reference: string; status: string; holder_name: string }>(
    "select external_reference, status, holder_name from reservations where external_reference = any($1) order by external_reference",
    [references],
  );
  expect(bookings).toEqual(
    [...references].sort().map((r) => ({ external_reference: r, status: "CANCELLED", holder_name: "Guest 3" })),
  );
}

/** pg_locks rows of booking locks (two-key advisory locks in the 'reservation-events' space), of one booking or all. */
const bookingLocks = async (granted: boolean, reference?: string) =>
  (
    await sql<{ n: number }>(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and objsubid = 2 and granted = $1
         and classid = ((hashtext('reservation-events')::bigint + 4294967296) % 4294967296)::oid
         and ($2::text is null or objid = ((hashtext($3 || ':' || $2)::bigint + 4294967296) % 4294967296)::oid)`,
      [granted, reference ?? null, hotel.property.id],
    )
  )[0]!.n;

describe("workers behind PgBouncer in transaction pooling mode", () => {
  it(
    "NEW, MODIFIED x3 and CANCELLED of 24 bookings through one API and two worker processes: every message applied, no lock left",
    { timeout: 180_000 },
    async () => {
      const api = await startService({ ...env, ROLE: "api" }, { envFile: true });
      const workers = [
        await startService({ ...env, ROLE: "worker" }, { envFile: true }),
        await startService({ ...env, ROLE: "worker" }, { envFile: true }),
      ];
      const references = Array.from({ length: 24 }, (_, i) => `PGB-${Date.now()}-${i}`);
      const ids = (await Promise.all(references.map((r, i) => lifecycle(api.base, r, i * 2)))).flat();
      await expectApplied(ids, references);
      // each lock goes with its job's COMMIT, right after the job's last outcome
      await until(async () => (await bookingLocks(true)) === 0, 5_000, "no booking lock held");
      for (const p of [api, ...workers]) p.child.kill("SIGTERM");
      for (const p of [api, ...workers]) expect(await p.exited, p.output()).toBe(0);
    },
  );
});

/** Holds one booking's lock from outside (a direct connection), as a long-running worker would. */
async function holdBookingLock(reference: string): Promise<{ release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: cluster.url("hotelops") });
  c.on("error", () => undefined);
  heldLocks.push(c);
  await c.connect();
  await c.query("begin");
  await c.query("select pg_advisory_xact_lock(hashtext('reservation-events'), hashtext($1 || ':' || $2))", [
    hotel.property.id,
    reference,
  ]);
  return {
    async release() {
      await c.end();
    },
  };
}

/** Resolves once a worker waits for the booking's lock (its job is in flight with a connection checked out). */
const aJobWaitsForTheLock = (reference: string) =>
  until(async () => (await bookingLocks(false, reference)) > 0, 30_000, "a job waiting for the booking lock");

const exitedWithin = (p: ServiceProcess, ms: number) =>
  Promise.race([p.exited.then((code) => ({ code })), new Promise((r) => setTimeout(() => r("still running"), ms))]);

describe("connections dropped from outside", () => {
  it(
    "PgBouncer killed and LISTEN sessions terminated mid-job: both processes stay up, /readyz says 503 meanwhile, they reconnect and apply every message",
    { timeout: 180_000 },
    async () => {
      const all = await startService({ ...env, ROLE: "all" }, { envFile: true });
      const worker = await startService({ ...env, ROLE: "worker" }, { envFile: true });
      const stuck = `DROP-${Date.now()}-stuck`;
      const lock = await holdBookingLock(stuck);
      const ids = [await send(all.base, "NEW", stuck, 1, "Guest 0")];
      await aJobWaitsForTheLock(stuck);
      const before = Array.from({ length: 4 }, (_, i) => `DROP-${Date.now()}-a${i}`);
      ids.push(...(await Promise.all(before.map((r, i) => lifecycle(all.base, r, 3 + i * 2)))).flat());

      await bouncer.kill();
      await sql("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'hotelops-listen'");
      const ready: number[] = [];
      const outage = Date.now();
      while (Date.now() - outage < 4_000) {
        const r = await fetch(`${all.base}/readyz`, { signal: AbortSignal.timeout(5_000) });
        ready.push(r.status);
        await r.arrayBuffer();
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(new Set(ready)).toEqual(new Set([503]));
      expect([all.child.exitCode, worker.child.exitCode], all.output() + worker.output()).toEqual([null, null]);
      await bouncer.start();
      await lock.release();

      await until(async () => (await fetch(`${all.base}/readyz`)).status === 200, 30_000, "ready again");
      // both LISTEN sessions are back (reconnected with backoff, no restart)
      await until(
        async () =>
          (
            await sql<{ n: number }>(
              "select count(*)::int as n from pg_stat_activity where application_name = 'hotelops-listen'",
            )
          )[0]!.n >= 2,
        30_000,
        "LISTEN sessions back",
      );
      const after = Array.from({ length: 4 }, (_, i) => `DROP-${Date.now()}-b${i}`);
      ids.push(...(await Promise.all(after.map((r, i) => lifecycle(all.base, r, 11 + i * 2)))).flat());
      await until(
        async () => (await statuses(ids)).QUEUED === undefined,
        90_000,
        `every message applied (${JSON.stringify(await statuses(ids))})`,
      );
      expect(await statuses(ids)).toEqual({ PROCESSED: ids.length });
      expect([all.child.exitCode, worker.child.exitCode]).toEqual([null, null]);
      for (const p of [all, worker]) p.child.kill("SIGTERM");
      for (const p of [all, worker]) expect(await p.exited, p.output()).toBe(0);
    },
  );
});

describe("SIGTERM with a stuck job", () => {
  it(
    "a worker whose job waits on a lock exits within SHUTDOWN_GRACE_MS + 2 s; the job is applied by another worker later",
    { timeout: 120_000 },
    async () => {
      const grace = 3_000;
      const worker = await startService(
        { ...env, ROLE: "worker", SHUTDOWN_GRACE_MS: String(grace) },
        { envFile: true },
      );
      const reference = `STUCK-${Date.now()}`;
      const lock = await holdBookingLock(reference);
      const id = await send(`http://127.0.0.1:${admin.port}`, "NEW", reference, 19, "Guest 0");
      await aJobWaitsForTheLock(reference);
      const signalled = Date.now();
      worker.child.kill("SIGTERM");
      const outcome = await exitedWithin(worker, grace + 2_000 + 1_500);
      const ms = Date.now() - signalled;
      expect(outcome, worker.output()).toEqual({ code: 1 });
      expect(ms).toBeGreaterThanOrEqual(grace);
      expect(worker.output()).toMatch(/shutdown grace exceeded/);
      await lock.release();
      // the job was failed at the end of the grace: another worker retries it
      const next = await startService({ ...env, ROLE: "worker" }, { envFile: true });
      await until(
        async () => (await statuses([id])).PROCESSED === 1,
        60_000,
        "the stuck job applied by another worker",
      );
      next.child.kill("SIGTERM");
      expect(await next.exited).toBe(0);
    },
  );
});

describe("a load balancer in front (docs/operations/workers-and-pgbouncer.md)", () => {
  it(
    "HAProxy checking /healthz keeps both API processes in during a database outage: clients get the service's 503 with Retry-After, then 200",
    { timeout: 120_000 },
    async () => {
      const apis = [
        await startService({ ...env, ROLE: "api" }, { envFile: true }),
        await startService({ ...env, ROLE: "api" }, { envFile: true }),
      ];
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
      // deploy/haproxy/haproxy.cfg as shipped, listening on a free port in front of these two processes
      writeFileSync(
        join(dir, "haproxy.cfg"),
        renderHaproxyCfg({ bind: `127.0.0.1:${port}`, servers: apis.map((a) => a.base.replace("http://", "")) }),
      );
      const haproxy = spawn(requireBinary("haproxy", "haproxy"), ["-db", "-f", join(dir, "haproxy.cfg")], {
        stdio: "ignore",
      });
      try {
        const base = `http://127.0.0.1:${port}`;
        const read = () =>
          fetch(`${base}/api/mobile/v1/reservations/options?arrivalDate=2027-03-10&departureDate=2027-03-12&adults=2`, {
            headers: { authorization: `Bearer ${hotel.manager.accessToken}` },
            signal: AbortSignal.timeout(10_000),
          });
        await until(async () => (await read().catch(() => undefined))?.status === 200, 15_000, "haproxy serving");
        // the database (through PgBouncer) goes away for 8 s
        await bouncer.kill();
        const answers: { status: number; retryAfter: string | null; body: string }[] = [];
        const outage = Date.now();
        while (Date.now() - outage < 8_000) {
          const r = await read();
          answers.push({ status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.text() });
          await new Promise((r) => setTimeout(r, 250));
        }
        await bouncer.start();
        for (const a of answers) {
          expect(a.status).toBe(503);
          expect(a.retryAfter).not.toBeNull();
          expect(JSON.parse(a.body)).toMatchObject({ error: { code: "unavailable" } });
        }
        await until(async () => (await read()).status === 200, 15_000, "serving through haproxy again");
      } finally {
        haproxy.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
        for (const a of apis) a.child.kill("SIGTERM");
        for (const a of apis) await a.exited;
      }
    },
  );
});
