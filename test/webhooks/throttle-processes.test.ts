// An address's maximum rate and concurrency hold across worker processes: two ROLE=worker processes send to one
// receiver, which measures, on the real clock, the most requests it saw start in any one second and the most it
// had open at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { recordEvents } from "../../src/modules/events/index.ts";
import { createWebhookParts } from "../../src/modules/webhooks/index.ts";
import { createPartnerRoomTypeCodes } from "../../src/modules/connectivity/index.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";
import { createTestCa, startReceiver, testSecretKey, type Receiver, type TestCa } from "../helpers/webhooks.ts";

let ca: TestCa;
let receiver: Receiver;
let admin: App;
let env: Record<string, string>;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  env = {
    DATABASE_URL: await freshDatabaseUrl(),
    DATA_DIR: mkdtempSync(join(tmpdir(), "throttle-processes-")),
    WEBHOOK_SECRET_KEY: testSecretKey,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
  };
  // Setting up data only: ROLE=api runs no jobs and no dispatcher, so the two workers are the only senders.
  admin = await createApp(loadConfig({ ...env, ROLE: "api", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" }), {
    logger: pino({ level: "silent" }),
  });
}, 60_000);
afterAll(async () => {
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
  killAllServices();
  await admin?.close();
  await receiver?.close();
});

describe("per-address limits across worker processes", () => {
  it(
    "two ROLE=worker processes together start at most maxPerSecond requests in any second and keep at most maxConcurrency open",
    { timeout: 120_000 },
    async () => {
      const rate = 20;
      const concurrency = 3;
      const events = 160;
      // Answers after 60 ms: at 20/s about 1.2 requests are open on average, so 3 binds only when starts bunch.
      let open = 0;
      let peakOpen = 0;
      // Which worker sent each request: the process holding the connection's client port, looked up while it is open.
      const senderOfPort = new Map<number, number>();
      const sentBy = new Map<number, number>();
      receiver.behave((req, res) => {
        const port = req.socket.remotePort!;
        if (!senderOfPort.has(port))
          senderOfPort.set(port, workers.find((w) => socketPortsOf(w.child.pid!).includes(port))?.child.pid ?? 0);
        sentBy.set(senderOfPort.get(port)!, (sentBy.get(senderOfPort.get(port)!) ?? 0) + 1);
        open++;
        peakOpen = Math.max(peakOpen, open);
        setTimeout(() => {
          open--;
          res.writeHead(204);
          res.end();
        }, 60);
      });
      const property = await createTestProperty(admin);
      const user = await createStaffSession(admin, { propertyCode: property.code, role: "manager" });
      const parts = createWebhookParts(admin.deps, createPartnerRoomTypeCodes(admin.db.pool));
      await parts.service.create(
        { propertyId: property.id, userId: user.userId },
        {
          url: receiver.url("/limited", "localhost"),
          eventTypes: ["reservation.created"],
          maxPerSecond: rate,
          maxConcurrency: concurrency,
        },
      );
      workers.push(await startService({ ...env, ROLE: "worker" }), await startService({ ...env, ROLE: "worker" }));
      // Every event at once: both workers' fan-out jobs, dispatchers and deferrals compete for the address.
      await admin.deps.transact((tx) =>
        recordEvents(
          tx,
          Array.from({ length: events }, (_, i) => ({
            propertyId: property.id,
            type: "reservation.created" as const,
            occurredAt: new Date(),
            data: { id: `r${i}`, code: `R-${i}`, adults: 2 },
          })),
        ),
      );
      await receiver.waitFor(events, 60_000);
      const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
      const peakIn = (ms: number) => {
        let most = 0;
        for (let i = 0, j = 0; i < times.length; i++) {
          while (times[i]! - times[j]! >= ms) j++;
          most = Math.max(most, i - j + 1);
        }
        return most;
      };
      const peak = peakIn(1000);
      const seconds = (times.at(-1)! - times[0]!) / 1000;
      await until(
        async () =>
          (
            await admin.deps.db.pool.query<{ n: number }>(
              "select count(*)::int as n from webhook_deliveries where status = 'succeeded'",
            )
          ).rows[0]!.n === events,
        10_000,
        "every delivery recorded",
      );
      // Both processes sent (otherwise this proves nothing about two of them).
      const perWorker = workers.map((w) => sentBy.get(w.child.pid!) ?? 0);
      console.log(
        `two workers, limit ${rate}/s and ${concurrency} open: peak ${peak} starts in 1 s (${peakIn(3000)} in 3 s), ${peakOpen} open at once, ${events} in ${seconds.toFixed(1)} s, per worker ${perWorker.join(" + ")}`,
      );
      expect(perWorker.filter((n) => n > 0)).toHaveLength(2);
      // Starts are spaced 1/rate apart on the database's timeline: a one-second window holds at most rate + 1 of
      // them; the arrival times add the jitter of a busy machine (one more at most, seen in 1 of 8 runs under
      // load; 42 with the per-process throttle), and over three seconds that jitter no longer shows.
      expect(peak).toBeLessThanOrEqual(rate + 2);
      expect(peakIn(3000)).toBeLessThanOrEqual(3 * rate + 1);
      expect(peakOpen).toBeLessThanOrEqual(concurrency);
      // and the address is not starved either (half its budget at least, on a busy machine)
      expect(events / seconds).toBeGreaterThan(rate * 0.5);
    },
  );
});

/** Local TCP ports of a process's sockets (Linux /proc), to tell which process a connection came from. */
function socketPortsOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m) inodes.add(m[1]!);
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.push(parseInt(cols[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}
