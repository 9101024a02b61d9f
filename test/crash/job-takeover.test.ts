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

/**
 * The queue's job (its data holds `job`), enqueued with no worker running, is taken by a worker while `lockSql` is held (it waits on it);
 * the worker is killed and the lock let go; a second worker is started. Resolves with the seconds from the kill to
 * `done` answering, which must be within the queue's bound.
 */
async function takenOver(
  queue: QueueName,
  job: Record<string, string>,
  lockSql: string,
  params: unknown[],
  done: () => Promise<boolean>,
) {
  const bound = takeoverBounds[queue];
  if (bound === "next run") throw new Error(`${queue} has a takeover bound`);
  const held = await holdLock(databaseUrl, lockSql, params);
  const first = await startService(workerEnv);
  await held.waitedOn(30_000);
  const active = await app.db.pool.query<{ n: number }>(
    "select count(*)::int as n from pgboss.job where name = $1 and data @> $2::jsonb and state = 'active'",
    [queue, JSON.stringify(job)],
  );
  expect(active.rows[0]!.n).toBe(1);
  await kill9(first);
  const killedAt = performance.now();
  // the killed worker's backend was waiting on the lock: ended, so what it had sent never runs
  expect(await held.release()).toBe(1);
  expect(await done()).toBe(false);
  const second = await startService(workerEnv);
  await until(done, (bound.afterKill + 30) * 1000, `${queue}: the job done after the kill`);
  const seconds = (performance.now() - killedAt) / 1000;
  console.log(`${queue}: kill -9 to done in ${seconds.toFixed(1)} s (bound ${bound.afterKill} s)`);
  expect(seconds, `${queue} done ${seconds.toFixed(1)} s after the kill`).toBeLessThan(bound.afterKill);
  await kill9(second);
}

describe("jobs taken over after kill -9 of their worker, on the real clock", { timeout: 240_000 }, () => {
  it("events.fanout: the event's delivery is created and sent once by another worker", async () => {
    const manager = await createStaffSession(app, { propertyCode: hotel.code, role: "manager" });
    const hook = await fetch(`${app.baseUrl}/api/panel/v1/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${manager.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url("/fanout", "localhost"), eventTypes: ["reservation.created"] }),
    });
    expect(hook.status).toBe(201);
    const eventId = await app.deps.transact((tx) =>
      recordEvent(tx, { propertyId: hotel.propertyId, type: "reservation.created", occurredAt: new Date(), data: {} }),
    );
    const deliveries = async () =>
      (
        await app.db.pool.query<{ status: string; attempts: number }>(
          "select status, attempts from webhook_deliveries where event_id = $1",
          [eventId],
        )
      ).rows;
    // the fan-out's insert of the delivery waits (a SHARE lock on the table lets reads through, not inserts)
    await takenOver(queues.eventsFanout, { eventId }, "lock table webhook_deliveries in share mode", [], async () => {
      const d = await deliveries();
      return d.length === 1 && d[0]!.status === "succeeded";
    });
    expect(await deliveries()).toEqual([{ status: "succeeded", attempts: 1 }]);
    const sent = receiver.received.filter((r) => r.headers["service-event-id"] === eventId);
    expect(sent.map((r) => [r.path, r.headers["service-delivery-attempt"]])).toEqual([["/fanout", "1"]]);
  });

  it("notifications.email: the staff alert is e-mailed once by another worker", async () => {
    // a property of its own with one member: one notification, one job
    const property = await createTestProperty(app);
    const manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const title = `Takeover alert ${manager.userId}`;
    const ids = await app.deps.transact((tx) =>
      alertStaff(
        tx,
        { propertyId: property.id, permission: "dashboard.view", kind: "test.takeover", title, body: "A test." },
        new Date(),
      ),
    );
    expect(ids).toHaveLength(1);
    const mails = async () => (await readOutbox(dataDir)).filter((m) => m.subject.startsWith(title));
    // the job's read of its notification waits (ACCESS EXCLUSIVE holds off reads too)
    await takenOver(
      queues.notificationsEmail,
      { notificationId: ids[0]! },
      "lock table notifications in access exclusive mode",
      [],
      async () => (await mails()).length > 0,
    );
    expect((await mails()).map((m) => m.to)).toEqual([manager.email]);
  });

  it("reservations.option-expiry: the lapsed option is cancelled once by another worker", async () => {
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
    // the job's read of the reservation (for update) waits on the row
    await takenOver(
      queues.reservationOptionExpiry,
      { reservationId: id },
      "select 1 from reservations where property_id = $1 and id = $2 for update",
      [hotel.propertyId, id],
      async () => (await state()).status === "CANCELLED",
    );
    expect(await state()).toEqual({ status: "CANCELLED", reason: "option_expired", cancelled: 1 });
  });
});
