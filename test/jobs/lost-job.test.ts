import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { queues, takeoverBounds } from "../../src/jobs/queues.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { killAllServices, startService, until } from "../helpers/service-process.ts";
import { createHotel, services, type Hotel } from "../reservations/fixtures.ts";

// The API in this process; the workers are real processes (`npm start` with ROLE=worker), one of them killed.
let app: TestApp;
let databaseUrl: string;
let hotel: Hotel;
let partnerToken: string;
let sql: pg.Client;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ databaseUrl, env: { ROLE: "api" } });
  hotel = await createHotel(app, services(app).inventory, { rooms: 5 });
  partnerToken = (
    await createTestClient(app, {
      provider: "lostprov",
      propertyCodes: [hotel.code],
      scopes: ["reservations.write", "reservations.read"],
      approved: true,
    })
  ).accessToken;
  for (const [kind, code, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "RO", "X-RO"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: hotel.code, provider: "lostprov", kind, code, externalCode });
  sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  killAllServices();
  await sql?.end();
  await app?.close();
});

const keyLock = "hashtext('reservation-events'), hashtext($1 || ':' || $2)";

describe("a job lost with its worker", () => {
  it("runs again on another worker within its queue's bound after a kill -9, before its 45 s expiry could lapse", async () => {
    const ref = "LOST-1";
    // The test holds the booking's lock, so the worker that takes the job waits in it: the job stays active.
    await sql.query(`select pg_advisory_lock(${keyLock})`, [hotel.propertyId, ref]);
    const first = await startService({ ROLE: "worker", DATABASE_URL: databaseUrl });
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${hotel.code}/reservation-events`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${partnerToken}`,
        "content-type": "application/json",
        "idempotency-key": "lost-job-1",
      },
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: ref,
        arrivalDate: "2027-02-10",
        departureDate: "2027-02-11",
        rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-RO", adults: 1, amountMinor: 100000 }],
        totalMinor: 100000,
        currency: "TRY",
        holder: { name: "Lost Job" },
      }),
    });
    expect(res.status).toBe(202);
    const { eventId } = (await res.json()) as { eventId: string };
    const active = async () =>
      (
        await sql.query<{ n: number }>(
          "select count(*)::int as n from pgboss.job where name = 'connectivity.reservation-events' and state = 'active' and data->>'externalReference' = $1",
          [ref],
        )
      ).rows[0]!.n === 1;
    await until(active, 30_000, "the first worker took the job");

    first.child.kill("SIGKILL");
    await first.exited;
    const killedAt = performance.now();
    await sql.query(`select pg_advisory_unlock(${keyLock})`, [hotel.propertyId, ref]);
    expect(await active()).toBe(true); // nobody settled it: the job is still held by the dead worker
    const second = await startService({ ROLE: "worker", DATABASE_URL: databaseUrl });
    const status = async () =>
      (await sql.query<{ status: string }>("select status from partner_messages where id = $1", [eventId])).rows[0]!
        .status;
    await until(async () => (await status()) === "PROCESSED", 90_000, "the event processed");
    const seconds = (performance.now() - killedAt) / 1000;
    // Heartbeat late by at most 10 s, the supervisor's next pass (every 5 s, its monitor gate too), the first retry
    // (1-2 s), the next poll (every 2 s): 25 s stated (src/jobs/queues.ts). Before, pg-boss's 60 s monitor gate made it
    // 22-32 s and more, and 92 s before the heartbeat.
    const bound = takeoverBounds[queues.partnerMessages];
    if (bound === "next run") throw new Error("partner messages have a takeover bound");
    expect(seconds, `processed ${seconds.toFixed(1)} s after the kill`).toBeLessThan(bound.afterKill);
    const { rows } = await sql.query<{ n: number }>(
      "select count(*)::int as n from reservations where property_id = $1 and external_reference = $2",
      [hotel.propertyId, ref],
    );
    expect(rows[0]!.n).toBe(1);
    second.child.kill("SIGTERM");
    await second.exited;
  }, 150_000);
});
