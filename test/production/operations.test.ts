import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { startPgCluster, type PgCluster } from "../../scripts/pg-cluster.ts";
import { createTestClient } from "../helpers/auth.ts";
import { startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.ts";
import { killAllServices, startService, until } from "../helpers/service-process.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";

// Operating the service on a real PostgreSQL server (Debian's package, a throw-away cluster): rolling restarts,
// the database going away, PgBouncer in front.
let cluster: PgCluster;
let ca: TestCa;
let receiver: Receiver;
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
  ca = createTestCa();
  receiver = await startReceiver(ca);
  env = {
    DATABASE_URL: cluster.url("hotelops"),
    DATA_DIR: mkdtempSync(join(tmpdir(), "operations-data-")),
    WEBHOOK_SECRET_KEY: testSecretKey,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    RATE_LIMIT_ANON_PER_MINUTE: "100000",
  };
  admin = await createApp(loadConfig({ ...env, ROLE: "api", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" }), {
    logger: pino({ level: "silent" }),
  });
  hotel = await smallHotel(admin, `http://127.0.0.1:${admin.port}`);
  await hotel.addWebhook(receiver.url("/hook", "localhost"));
  await setProviderMapping(admin.deps.db.pool, {
    propertyCode: hotel.property.code,
    provider: "acme",
    kind: "room_type",
    code: "DBL",
    externalCode: "X-DBL",
  });
  await setProviderMapping(admin.deps.db.pool, {
    propertyCode: hotel.property.code,
    provider: "acme",
    kind: "rate_plan",
    code: "BAR",
    externalCode: "X-BAR",
  });
  partner = await createTestClient(admin, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [hotel.property.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
}, 120_000);
afterAll(async () => {
  killAllServices();
  try {
    await admin?.close();
    await receiver?.close();
  } finally {
    cluster?.remove();
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  }
});

const sql = async (text: string, params: unknown[] = []) => (await admin.deps.db.pool.query(text, params)).rows;

/** A read that touches the database through auth (session lookup), rate limit and the options query. */
const read = (base: string, signal?: AbortSignal) =>
  fetch(`${base}/api/mobile/v1/reservations/options?arrivalDate=2027-03-10&departureDate=2027-03-12&adults=2`, {
    headers: { authorization: `Bearer ${hotel.manager.accessToken}` },
    ...(signal ? { signal } : {}),
  });

let refSeq = 0;
const partnerEvent = (base: string) =>
  fetch(`${base}/api/v1/properties/${hotel.property.code}/reservation-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${partner.accessToken}`,
      "content-type": "application/json",
      "idempotency-key": `op-${++refSeq}-${Date.now()}`,
    },
    body: JSON.stringify({
      eventType: "NEW",
      externalReference: `OP-${refSeq}-${Date.now()}`,
      channel: "Booking.com",
      arrivalDate: "2027-04-20",
      departureDate: "2027-04-21",
      currency: "TRY",
      holder: { name: "Outage Guest" },
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
      totalMinor: 25000,
    }),
  });

describe("rolling restart", () => {
  it(
    "a new API process joins, the old one gets SIGTERM: zero failed requests, in-flight ones finish, it exits within SHUTDOWN_GRACE_MS",
    { timeout: 120_000 },
    async () => {
      const grace = 4_000;
      const old = await startService({ ...env, ROLE: "api", SHUTDOWN_GRACE_MS: String(grace) });
      // client-side round robin over the live backends, as a load balancer with health checks does
      const backends = [old.base];
      let next = 0;
      const failures: string[] = [];
      let ok = 0;
      let running = true;
      const client = async (): Promise<void> => {
        while (running) {
          const base = backends[next++ % backends.length]!;
          try {
            const r = await read(base);
            await r.arrayBuffer();
            if (r.status === 200) ok++;
            else failures.push(`${base} ${r.status}`);
          } catch (err) {
            failures.push(`${base} ${String((err as Error).cause ?? err)}`);
          }
        }
      };
      const load = Array.from({ length: 6 }, client);
      await new Promise((r) => setTimeout(r, 1_000));
      const fresh = await startService({ ...env, ROLE: "api", SHUTDOWN_GRACE_MS: String(grace) });
      backends.push(fresh.base);
      await new Promise((r) => setTimeout(r, 1_000));
      // the balancer stops sending new requests to the old process, then it is told to stop (requests are in flight)
      backends.splice(backends.indexOf(old.base), 1);
      const servedBefore = ok;
      const stopped = Date.now();
      old.child.kill("SIGTERM");
      expect(await old.exited).toBe(0);
      const exitMs = Date.now() - stopped;
      await new Promise((r) => setTimeout(r, 1_000));
      running = false;
      await Promise.all(load);
      expect(failures).toEqual([]);
      expect(ok).toBeGreaterThan(servedBefore);
      expect(exitMs).toBeLessThan(grace + 1_000);
      fresh.child.kill("SIGTERM");
      expect(await fresh.exited).toBe(0);
    },
  );

  it("a request in flight when SIGTERM arrives is answered before the process exits", { timeout: 60_000 }, async () => {
    const service = await startService({ ...env, ROLE: "api", SHUTDOWN_GRACE_MS: "5000" });
    // a reservation create whose body is still arriving when the signal comes
    const body = Buffer.from(
      JSON.stringify(
        hotel.stay({
          holderName: "In Flight",
          arrivalDate: "2027-03-25",
          departureDate: "2027-03-26",
          totalMinor: 25000,
        }),
      ),
    );
    const req = http.request(`${service.base}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${hotel.manager.accessToken}`,
        "content-type": "application/json",
        "content-length": body.length,
        "idempotency-key": `inflight-${Date.now()}`,
      },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on("response", (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", reject);
    });
    req.write(body.subarray(0, 10));
    await new Promise((r) => setTimeout(r, 300));
    service.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    expect(service.child.exitCode).toBeNull();
    req.end(body.subarray(10));
    const done = await answer;
    expect(done.status, done.body).toBe(201);
    expect(await service.exited).toBe(0);
    expect(await sql("select count(*)::int as n from reservations where holder_name = 'In Flight'")).toEqual([
      { n: 1 },
    ]);
  });
});

describe("the database goes away for 10 s under load", () => {
  it(
    "answers 503 with Retry-After within 5 s, /readyz is not ready, nothing acknowledged is lost, jobs resume",
    { timeout: 180_000 },
    async () => {
      const service = await startService({ ...env, ROLE: "all" });
      // acknowledged before the outage: a mobile reservation and a partner event
      const before = await hotel.createReservation(hotel.stay({ holderName: "Before Outage" }));
      expect(before.status).toBe(201);
      const beforeId = ((await before.json()) as { id: string }).id;
      const deliveredBefore = receiver.received.length;

      cluster.stop();
      const stoppedAt = Date.now();
      const answers: { status: number; ms: number; retryAfter: string | null }[] = [];
      const notReady: number[] = [];
      while (Date.now() - stoppedAt < 10_000) {
        const t = Date.now();
        const [r, ready] = await Promise.all([
          read(service.base, AbortSignal.timeout(8_000)),
          fetch(`${service.base}/readyz`, { signal: AbortSignal.timeout(8_000) }),
        ]);
        await r.arrayBuffer();
        answers.push({ status: r.status, ms: Date.now() - t, retryAfter: r.headers.get("retry-after") });
        notReady.push(ready.status);
        await ready.arrayBuffer();
        const event = await partnerEvent(service.base);
        answers.push({ status: event.status, ms: Date.now() - t, retryAfter: event.headers.get("retry-after") });
        await event.arrayBuffer();
      }
      expect(answers.length).toBeGreaterThan(2);
      for (const a of answers) {
        expect(a.status).toBe(503);
        expect(a.retryAfter).not.toBeNull();
        expect(a.ms).toBeLessThan(5_000 + 500);
      }
      expect(new Set(notReady)).toEqual(new Set([503]));
      expect(service.child.exitCode).toBeNull();

      cluster.start();
      await until(async () => (await read(service.base)).status === 200, 30_000, "serving again");
      await until(async () => (await fetch(`${service.base}/readyz`)).status === 200, 30_000, "ready again");
      // jobs resume: an event accepted after the outage is processed and its webhook delivered
      const after = await partnerEvent(service.base);
      expect(after.status).toBe(202);
      const afterId = ((await after.json()) as { eventId: string }).eventId;
      await until(
        async () =>
          (await sql("select status from partner_messages where id = $1", [afterId]))[0]?.status === "PROCESSED",
        60_000,
        "event processed after the outage",
      );
      await until(
        async () => receiver.received.length >= deliveredBefore + 1,
        60_000,
        "webhook delivered after the outage",
      );
      // nothing acknowledged before the outage is lost
      expect(await sql("select holder_name from reservations where id = $1", [beforeId])).toEqual([
        { holder_name: "Before Outage" },
      ]);
      await until(
        async () => receiver.received.some((r) => r.body.includes(beforeId)),
        60_000,
        "the earlier reservation's webhook delivered",
      );
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
    },
  );
});

describe("PgBouncer in transaction pooling mode", () => {
  let bouncer: PgBouncer | undefined;
  afterAll(() => bouncer?.remove());

  it(
    "serves writes, jobs and webhooks with DATABASE_URL through PgBouncer and DATABASE_DIRECT_URL for migrations and pg-boss",
    { timeout: 120_000 },
    async () => {
      // deploy/pgbouncer/pgbouncer.ini, as shipped
      bouncer = await startPgBouncer(cluster.port);
      const service = await startService({
        ...env,
        ROLE: "all",
        DATABASE_URL: bouncer.url,
        DATABASE_DIRECT_URL: cluster.url("hotelops"),
      });
      const delivered = receiver.received.length;
      const created = await fetch(`${service.base}/api/mobile/v1/reservations`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${hotel.manager.accessToken}`,
          "content-type": "application/json",
          "idempotency-key": `pgb-${Date.now()}`,
        },
        body: JSON.stringify(
          hotel.stay({
            holderName: "Pooled Guest",
            arrivalDate: "2027-03-20",
            departureDate: "2027-03-21",
            totalMinor: 25000,
          }),
        ),
      });
      expect(created.status).toBe(201);
      const events = await Promise.all(Array.from({ length: 20 }, () => partnerEvent(service.base)));
      const ids = await Promise.all(
        events.map(async (e) => {
          expect(e.status, service.output()).toBe(202);
          return ((await e.json()) as { eventId: string }).eventId;
        }),
      );
      await until(
        async () =>
          (
            await sql("select count(*)::int as n from partner_messages where id = any($1) and status <> 'QUEUED'", [
              ids,
            ])
          )[0].n === ids.length,
        30_000,
        "events processed through PgBouncer",
      );
      await until(async () => receiver.received.length > delivered, 30_000, "webhook delivered");
      service.child.kill("SIGTERM");
      expect(await service.exited).toBe(0);
      expect(service.output()).not.toMatch(/prepared statement/);
    },
  );
});
