import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startPgCluster, type PgCluster } from "../../scripts/pg-cluster.ts";
import { createTestClient } from "../helpers/auth.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";
import { smallHotel } from "../helpers/small-hotel.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";

// Two ROLE=api and two ROLE=worker processes on one PostgreSQL server (Debian's package, a throw-away cluster).
let cluster: PgCluster;
let ca: TestCa;
let receiver: Receiver;
let admin: App;
let env: Record<string, string>;
let sql: pg.Pool;

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
    DATA_DIR: mkdtempSync(join(tmpdir(), "processes-data-")),
    WEBHOOK_SECRET_KEY: testSecretKey,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    RATE_LIMIT_STAFF_PER_MINUTE: "100000",
    SHUTDOWN_GRACE_MS: "3000",
  };
  // The operator's tools (as `npm run ops` would): an in-process app that only sets up data.
  admin = await createApp(loadConfig({ ...env, ROLE: "api", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" }), {
    logger: pino({ level: "silent" }),
  });
  sql = admin.deps.db.pool;
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

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- bodies checked field by field

describe("two API and two worker processes on one database", () => {
  it(
    "under mixed load with a worker SIGKILLed midway: events processed once, webhooks delivered, no duplicates, counters exact, keys and limits shared",
    { timeout: 300_000 },
    async () => {
      const hotel = await smallHotel(admin, `http://127.0.0.1:${admin.port}`);
      await sql.query("update room_types set room_count = 40 where id = $1", [hotel.roomTypeId]);
      for (let n = 200; n < 236; n++)
        await sql.query(
          "insert into rooms (id, property_id, room_type_id, number, status, created_at, updated_at) values ($1, $2, $3, $4, 'CLEAN', now(), now())",
          [newId(), hotel.property.id, hotel.roomTypeId, String(n)],
        );
      await hotel.addWebhook(receiver.url("/hook", "localhost"));
      await setProviderMapping(sql, {
        propertyCode: hotel.property.code,
        provider: "acme",
        kind: "room_type",
        code: "DBL",
        externalCode: "X-DBL",
      });
      await setProviderMapping(sql, {
        propertyCode: hotel.property.code,
        provider: "acme",
        kind: "rate_plan",
        code: "BAR",
        externalCode: "X-BAR",
      });
      const partner = await createTestClient(admin, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [hotel.property.code],
        scopes: ["reservations.write", "reservations.read", "availability.read"],
        approved: true,
      });

      const apis = [await startService({ ...env, ROLE: "api" }), await startService({ ...env, ROLE: "api" })];
      const workers: ServiceProcess[] = [
        await startService({ ...env, ROLE: "worker" }),
        await startService({ ...env, ROLE: "worker" }),
      ];
      const api = (i: number) => apis[i % 2]!.base;

      const mobile = (i: number, key: string, via = i) =>
        fetch(`${api(via)}/api/mobile/v1/reservations`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${hotel.manager.accessToken}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify(
            hotel.stay({
              holderName: `Guest ${key.slice(-6)}`,
              arrivalDate: `2027-03-${String(10 + (i % 8)).padStart(2, "0")}`,
              departureDate: `2027-03-${String(12 + (i % 8)).padStart(2, "0")}`,
            }),
          ),
        });
      const event = (i: number, ref: string, key: string, via = i) =>
        fetch(`${api(via)}/api/v1/properties/${hotel.property.code}/reservation-events`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${partner.accessToken}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify({
            eventType: "NEW",
            externalReference: ref,
            channel: "Booking.com",
            arrivalDate: `2027-04-${String(1 + (i % 10)).padStart(2, "0")}`,
            departureDate: `2027-04-${String(3 + (i % 10)).padStart(2, "0")}`,
            currency: "TRY",
            holder: { name: `Channel ${ref}` },
            rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 50000 }],
            totalMinor: 50000,
          }),
        });

      const created: { i: number; key: string; id: string }[] = [];
      const accepted: { i: number; ref: string; key: string; eventId: string }[] = [];
      let refused = 0;
      const rounds = 8;
      for (let round = 0; round < rounds; round++) {
        if (round === rounds / 2) workers[0]!.child.kill("SIGKILL");
        await Promise.all(
          Array.from({ length: 10 }, async (_, j) => {
            const i = round * 10 + j;
            const key = newId();
            const m = await mobile(i, key);
            if (m.status === 201) created.push({ i, key, id: ((await m.json()) as Json).id });
            else {
              expect(m.status).toBe(409); // sold out: refused, never overbooked
              refused++;
              await m.body?.cancel();
            }
            const ref = `BK-${i}`;
            const eventKey = newId();
            const e = await event(i, ref, eventKey);
            expect(e.status).toBe(202);
            accepted.push({ i, ref, key: eventKey, eventId: ((await e.json()) as Json).eventId });
          }),
        );
      }
      expect(await workers[0]!.exited).toBeNull();
      expect(created.length).toBeGreaterThan(20);

      // idempotency keys hold across processes: a retry through the other API replays, it does not run again
      for (const c of created.slice(0, 5)) {
        const again = await mobile(c.i, c.key, c.i + 1);
        expect(again.headers.get("idempotency-replayed")).toBe("true");
        expect(((await again.json()) as Json).id).toBe(c.id);
      }
      for (const a of accepted.slice(0, 5)) {
        const again = await event(a.i, a.ref, a.key, a.i + 1);
        expect(again.headers.get("idempotency-replayed")).toBe("true");
        expect(((await again.json()) as Json).eventId).toBe(a.eventId);
      }

      // every accepted event is processed (a job lost with the killed worker is retried once its heartbeat is missed)
      await until(
        async () =>
          (
            await sql.query(
              "select count(*)::int as n from partner_messages where id = any($1) and status = 'QUEUED'",
              [accepted.map((a) => a.eventId)],
            )
          ).rows[0].n === 0,
        240_000,
        "events processed",
      );
      const processed = await sql.query(
        "select status, count(*)::int as n from partner_messages where id = any($1) group by status",
        [accepted.map((a) => a.eventId)],
      );
      expect(processed.rows.reduce((s, r) => s + r.n, 0)).toBe(accepted.length);
      // exactly once: one reservation per booking reference, one per mobile create
      const dupRefs = await sql.query(
        "select external_reference from reservations where property_id = $1 and external_reference is not null group by 1 having count(*) > 1",
        [hotel.property.id],
      );
      expect(dupRefs.rows).toEqual([]);
      const channel = await sql.query(
        "select count(*)::int as n from reservations where property_id = $1 and source = 'CHANNEL'",
        [hotel.property.id],
      );
      const done = processed.rows.find((r) => r.status === "PROCESSED")?.n ?? 0;
      expect(channel.rows[0].n).toBe(done);
      const mobiles = await sql.query(
        "select count(*)::int as n from reservations where property_id = $1 and source = 'MOBILE'",
        [hotel.property.id],
      );
      expect(mobiles.rows[0].n).toBe(created.length);

      // availability counters equal what reservations hold, day by day
      const days = await sql.query(
        `select d.date, d.sold, (select count(*)::int from reservation_rooms rr join reservations r on r.property_id = rr.property_id and r.id = rr.reservation_id
                 where rr.property_id = d.property_id and rr.room_type_id = d.room_type_id and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE')
                   and r.arrival_date <= d.date and r.departure_date > d.date) as held, d.total
         from room_type_days d where d.property_id = $1`,
        [hotel.property.id],
      );
      expect(days.rows.length).toBeGreaterThan(0);
      for (const d of days.rows) {
        expect(d.sold).toBe(d.held);
        expect(d.sold).toBeLessThanOrEqual(d.total);
      }

      // every reservation.created event is delivered at least once and recorded once
      const events = await sql.query<{ id: string }>(
        "select id from domain_events where property_id = $1 and type = 'reservation.created'",
        [hotel.property.id],
      );
      expect(events.rows.length).toBe(created.length + done);
      await until(
        async () =>
          (
            await sql.query(
              "select count(*)::int as n from webhook_deliveries where status = 'succeeded' and event_id = any($1)",
              [events.rows.map((e) => e.id)],
            )
          ).rows[0].n === events.rows.length,
        240_000,
        "webhooks delivered",
      );
      const perEvent = await sql.query(
        "select event_id, count(*)::int as n from webhook_deliveries where event_id = any($1) group by 1 having count(*) <> 1",
        [events.rows.map((e) => e.id)],
      );
      expect(perEvent.rows).toEqual([]);
      const seen = new Set(receiver.received.map((r) => r.headers["service-event-id"]));
      for (const e of events.rows) expect(seen.has(e.id)).toBe(true);

      // rate limits are counted in the database, so across both API processes
      const limited = await createTestClient(admin, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [hotel.property.code],
        scopes: ["reservations.read"],
        approved: true,
      });
      await sql.query("update api_clients set rate_limit_per_minute = 6 where id = $1", [limited.clientId]);
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await fetch(`${api(i)}/api/v1/properties/${hotel.property.code}/reservations?limit=1`, {
          headers: { authorization: `Bearer ${limited.accessToken}` },
        });
        statuses.push(r.status);
        await r.body?.cancel();
      }
      expect(statuses.filter((s) => s === 200).length).toBe(6);
      expect(statuses.filter((s) => s === 429).length).toBe(4);
      expect(refused + created.length).toBe(rounds * 10);

      for (const p of [...apis, workers[1]!]) p.child.kill("SIGTERM");
      for (const p of [...apis, workers[1]!]) expect(await p.exited).toBe(0);
    },
  );
});
