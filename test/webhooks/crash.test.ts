import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { loadConfig } from "../../src/config.ts";
import { createServices } from "../../src/app.ts";
import { openDatabase, type Database } from "../../src/db/index.ts";
import { createTransact } from "../../src/db/transaction.ts";
import { startBoss, type Boss } from "../../src/jobs/boss.ts";
import { ManualClock, systemClock, type Clock } from "../../src/lib/clock.ts";
import { recordEvent } from "../../src/modules/events/index.ts";
import type { Deps } from "../../src/modules/module.ts";
import { createWebhookParts } from "../../src/modules/webhooks/index.ts";
import { createPartnerRoomTypeCodes } from "../../src/modules/connectivity/index.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { createTestCa, startReceiver, testResolver, testSecretKey, type Receiver } from "../helpers/webhooks.ts";
import { startArguments } from "../../scripts/start-command.ts";

// A worker process is killed (SIGKILL) while its attempt waits on the receiver; another process takes the
// delivery over once the claim's lease lapses, and the event arrives: first on a manual clock (not before the
// lease lapses), then on the real clock with a second worker process (within the lease and a poll).
let db: Database;
let boss: Boss;
let receiver: Receiver;
let child: ChildProcess | undefined;
let second: ChildProcess | undefined;
const logger = pino({ level: "silent" });

beforeAll(async () => {
  const ca = createTestCa();
  receiver = await startReceiver(ca);
  const env = {
    DATABASE_URL: await freshDatabaseUrl(),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
    WEBHOOK_SECRET_KEY: testSecretKey,
    DATA_DIR: mkdtempSync(join(tmpdir(), "webhook-crash-")),
    LOG_LEVEL: "silent",
  };
  Object.assign(globalThis, { crashEnv: env });
  db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR }, logger);
  // This process only sends jobs (ROLE=api): the worker child is the one that takes them.
  boss = await startBoss({ pool: db.pool, url: db.url, role: "api", logger });
});
afterAll(async () => {
  child?.kill("SIGKILL");
  second?.kill("SIGKILL");
  await boss?.stop();
  await db?.close();
  await receiver?.close();
});

function startWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, startArguments(), {
    cwd: join(import.meta.dirname, "../.."),
    env: { ...process.env, ...env, ROLE: "worker" },
    stdio: "ignore",
  });
}

/**
 * A new address at `path` whose first request is held open forever, a worker process that takes the event's
 * attempt and is killed (SIGKILL) while inside it. Returns what the rest of the test checks.
 */
async function killedMidAttempt(clock: Clock, path: string) {
  const env = (globalThis as unknown as { crashEnv: Record<string, string> }).crashEnv;
  const config = loadConfig({ ...env, PORT: "0" });
  const deps: Deps = { config, db, boss, transact: createTransact(db.pool, boss.pgboss), clock, logger };
  const parts = createWebhookParts(deps, createPartnerRoomTypeCodes(deps.db.pool), {
    resolver: testResolver(new Map([["localhost", ["127.0.0.1"]]])),
  });
  const app = { deps, services: createServices(deps) };
  const property = await createTestProperty(app);
  const user = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  const actor = { propertyId: property.id, userId: user.userId };
  const { endpoint } = await parts.service.create(actor, {
    url: receiver.url(path, "localhost"),
    eventTypes: ["reservation.created"],
  });
  const before = receiver.received.length;
  receiver.behave((req, res) => {
    if (req.url === path && receiver.received.length === before + 1) return;
    res.writeHead(204);
    res.end();
  });
  child = startWorker(env);
  const eventId = await deps.transact((tx) =>
    recordEvent(tx, { propertyId: property.id, type: "reservation.created", occurredAt: clock.now(), data: {} }),
  );
  const first = (await receiver.waitFor(before + 1, 20_000))[before]!;
  expect(first.headers["service-event-id"]).toBe(eventId);
  expect(first.headers["service-delivery-attempt"]).toBe("1");
  child.kill("SIGKILL");
  await new Promise((r) => child!.once("exit", r));
  /** The request after the held one (waiting up to ms for it). */
  const next = async (ms: number) => (await receiver.waitFor(before + 2, ms))[before + 1]!;
  return { env, parts, actor, endpoint, eventId, first, next };
}

describe("worker killed mid-attempt", () => {
  it("the delivery completes through another worker", async () => {
    const clock = new ManualClock(new Date());
    const { parts, actor, endpoint, eventId, first, next } = await killedMidAttempt(clock, "/hook");

    // Still claimed: nobody may take it over before the lease lapses.
    expect(await parts.engine.runDue()).toEqual([]);
    clock.advance(2 * 60_000);
    const [outcome] = await parts.engine.runDue();
    expect(outcome).toMatchObject({ attempt: 2, httpStatus: 204, status: "succeeded" });
    const second = await next(0);
    expect(second.headers["service-event-id"]).toBe(eventId);
    expect(second.headers["service-delivery-id"]).toBe(first.headers["service-delivery-id"]);
    const history = await parts.service.history(actor, endpoint.id, {});
    expect(history.deliveries.map((h) => [h.attempt, h.errorClass])).toEqual([
      [2, null],
      [1, "interrupted"],
    ]);
    await parts.sender.close();
  }, 60_000);

  it("on the real clock, another worker process delivers it within 35 s", async () => {
    const { env, parts, eventId, next } = await killedMidAttempt(systemClock, "/real-clock");
    const killedAt = performance.now();
    second = startWorker(env);

    const again = await next(45_000);
    const seconds = (performance.now() - killedAt) / 1000;
    expect(again.headers["service-event-id"]).toBe(eventId);
    expect(again.headers["service-delivery-attempt"]).toBe("2");
    // the lease (25 s, counted from the claim before the kill) and the dispatcher's 1 s poll; it was 60 s
    expect(seconds).toBeLessThan(35);
    await parts.sender.close();
  }, 90_000);
});
