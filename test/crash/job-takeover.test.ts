import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { queues, takeoverBounds, type QueueName } from "../../src/jobs/queues.ts";
import { readOutbox } from "../../src/lib/mail.ts";
import { recordEvent } from "../../src/modules/events/index.ts";
import { alertStaff } from "../../src/modules/notifications/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { holdLock } from "../helpers/held-lock.ts";
import { kill9, killAllServices, startService, until } from "../helpers/service-process.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";
import { booking, createHotel, type Hotel } from "../reservations/fixtures.ts";

// kill -9 of a worker inside a job of the queues whose takeover had no test of its own (partner messages, webhook
// attempts and e-document deliveries have theirs): event fan-out, staff e-mail, option expiry. The job's database
// work waits on a lock this test holds; the worker is killed, the lock let go, and another worker (`npm start`,
// ROLE=worker, started after the kill) does the job within the queue's stated bound (takeoverBounds), once.
// The API runs in this process (ROLE=api).

let app: TestApp;
let databaseUrl: string;
let dataDir: string;
let ca: TestCa;
let receiver: Receiver;
let hotel: Hotel;
let workerEnv: Record<string, string>;

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  databaseUrl = await freshDatabaseUrl();
  dataDir = mkdtempSync(join(tmpdir(), "job-takeover-"));
  const env = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    WEBHOOK_SECRET_KEY: testSecretKey,
  };
  app = await startTestApp({ databaseUrl, env: { ...env, ROLE: "api" } });
  hotel = await createHotel(app, app.services.inventory);
  workerEnv = { ...env, ROLE: "worker" };
}, 120_000);
afterAll(async () => {
  killAllServices();
  await app?.close();
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (ca) rmSync(ca.dir, { recursive: true, force: true });
});

/** One queue's job held in flight: its data (`job`), the lock its database work waits on, and when it is done. */
interface Flight {
  queue: QueueName;
  job: Record<string, string>;
  lockSql: string;
  params: unknown[];
  done: () => Promise<boolean>;
}

/**
 * The jobs (enqueued with no worker running) are taken by one worker while their locks are held (each waits on its
 * own); the worker is killed and the locks let go; a second worker is started. Each job must be done within its
 * queue's bound (takeoverBounds), counted from the kill. The three run at once: the test takes as long as the slowest.
 */
async function takenOver(flights: Flight[]) {
  const held = [];
  for (const f of flights) held.push(await holdLock(databaseUrl, f.lockSql, f.params));
  const first = await startService(workerEnv);
  for (const h of held) await h.waitedOn(30_000);
  for (const f of flights) {
    const active = await app.db.pool.query<{ n: number }>(
      "select count(*)::int as n from pgboss.job where name = $1 and data @> $2::jsonb and state = 'active'",
      [f.queue, JSON.stringify(f.job)],
    );
    expect(active.rows[0]!.n, `${f.queue}: one active job`).toBe(1);
  }
  await kill9(first);
  const killedAt = performance.now();
  // the killed worker's backends were waiting on the locks: ended, so what they had sent never runs
  for (const h of held) expect(await h.release()).toBe(1);
  for (const f of flights) expect(await f.done(), `${f.queue} done before the takeover`).toBe(false);
  const second = await startService(workerEnv);
  await Promise.all(
    flights.map(async (f) => {
      const bound = takeoverBounds[f.queue];
      if (bound === "next run") throw new Error(`${f.queue} has a takeover bound`);
      await until(f.done, (bound.afterKill + 30) * 1000, `${f.queue}: the job done after the kill`);
      const seconds = (performance.now() - killedAt) / 1000;
      console.log(`${f.queue}: kill -9 to done in ${seconds.toFixed(1)} s (bound ${bound.afterKill} s)`);
      expect(seconds, `${f.queue} done ${seconds.toFixed(1)} s after the kill`).toBeLessThan(bound.afterKill);
    }),
  );
  await kill9(second);
}

describe("jobs taken over after kill -9 of their worker, on the real clock", { timeout: 240_000 }, () => {
  it("event fan-out, staff e-mail and option expiry: each job done once by another worker within its bound", async () => {
    // events.fanout: a webhook endpoint on a property of its own (the option below, on `hotel`, fans out to nobody)
    const fanoutProperty = await createTestProperty(app);
    const manager = await createStaffSession(app, { propertyCode: fanoutProperty.code, role: "manager" });
    const hook = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${manager.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url("/fanout", "localhost"), eventTypes: ["reservation.created"] }),
    });
    expect(hook.status).toBe(201);
    const eventId = await app.deps.transact((tx) =>
      recordEvent(tx, { propertyId: fanoutProperty.id, type: "reservation.created", occurredAt: new Date(), data: {} }),
    );
    const deliveries = async () =>
      (
        await app.db.pool.query<{ status: string; attempts: number }>(
          "select status, attempts from webhook_deliveries where event_id = $1",
          [eventId],
        )
      ).rows;

    // notifications.email: a property of its own with one member: one notification, one job
    const alerted = await createTestProperty(app);
    const member = await createStaffSession(app, { propertyCode: alerted.code, role: "manager" });
    const title = `Takeover alert ${member.userId}`;
    const ids = await app.deps.transact((tx) =>
      alertStaff(
        tx,
        { propertyId: alerted.id, permission: "dashboard.view", kind: "test.takeover", title, body: "A test." },
        new Date(),
      ),
    );
    expect(ids).toHaveLength(1);
    const mails = async () => (await readOutbox(dataDir)).filter((m) => m.subject.startsWith(title));

    // reservations.option-expiry: an option that lapses a second from now
    const r = await app.services.reservations.create(hotel.actor, {
      ...booking(hotel),
      status: "TENTATIVE",
      optionUntil: new Date(Date.now() + 1_000),
    });
    const id = r.reservation.id;
    const state = async () =>
      (
        await app.db.pool.query<{ status: string; reason: string | null; cancelled: number }>(
          `select status, cancellation_reason as reason,
                  (select count(*)::int from domain_events where property_id = $1 and type = 'reservation.cancelled'
                     and data->>'id' = $3) as cancelled
             from reservations where property_id = $1 and id = $2`,
          [hotel.propertyId, id, id],
        )
      ).rows[0]!;

    await takenOver([
      {
        queue: queues.eventsFanout,
        job: { eventId },
        // the fan-out's insert of the delivery waits (a SHARE lock on the table lets reads through, not inserts)
        lockSql: "lock table webhook_deliveries in share mode",
        params: [],
        done: async () => {
          const d = await deliveries();
          return d.length === 1 && d[0]!.status === "succeeded";
        },
      },
      {
        queue: queues.notificationsEmail,
        job: { notificationId: ids[0]! },
        // the job's read of its notification waits (ACCESS EXCLUSIVE holds off reads too)
        lockSql: "lock table notifications in access exclusive mode",
        params: [],
        done: async () => (await mails()).length > 0,
      },
      {
        queue: queues.reservationOptionExpiry,
        job: { reservationId: id },
        // the job's read of the reservation (for update) waits on the row
        lockSql: "select 1 from reservations where property_id = $1 and id = $2 for update",
        params: [hotel.propertyId, id],
        done: async () => (await state()).status === "CANCELLED",
      },
    ]);

    expect(await deliveries()).toEqual([{ status: "succeeded", attempts: 1 }]);
    const sent = receiver.received.filter((r) => r.headers["service-event-id"] === eventId);
    expect(sent.map((r) => [r.path, r.headers["service-delivery-attempt"]])).toEqual([["/fanout", "1"]]);
    expect((await mails()).map((m) => m.to)).toEqual([member.email]);
    expect(await state()).toEqual({ status: "CANCELLED", reason: "option_expired", cancelled: 1 });
  });
});
