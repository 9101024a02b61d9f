// Webhook delivery throughput to a local HTTPS receiver (target >= 1000 deliveries/s), commit-to-first-attempt
// latency (p50/p99) and RSS. Loopback targets are allowed with the test-only flag; the CA is made with openssl.
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { recordEvent } from "../src/modules/events/index.ts";
import { createStaffSession, createTestProperty } from "../test/helpers/auth.ts";
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestCa } from "../test/helpers/https-receiver.ts";
import { benchDatabase, rssMiB } from "./harness.ts";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function benchWebhooks(): Promise<void> {
  const database = await benchDatabase();
  const ca = createTestCa();
  writeFileSync(join(ca.dir, "srv.key.pem"), ca.key);
  writeFileSync(join(ca.dir, "srv.crt.pem"), ca.cert);
  const child = fork(join(import.meta.dirname, "webhook-receiver.ts"), [join(ca.dir, "srv.key.pem"), join(ca.dir, "srv.crt.pem")]);
  const arrivals: number[] = [];
  const port = await new Promise<number>((resolve) =>
    child.on("message", (m: unknown) => {
      if (Array.isArray(m)) arrivals.push(...(m as number[]));
      else resolve((m as { port: number }).port);
    }),
  );
  const receiver = {
    received: arrivals,
    url: (path: string) => `https://receiver.test:${port}${path}`,
    async waitFor(count: number, ms: number): Promise<number[]> {
      const deadline = Date.now() + ms;
      while (arrivals.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${arrivals.length} of ${count} requests within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 1));
      }
      return arrivals;
    },
    close: async () => void child.kill(),
  };
  const wall = () => performance.timeOrigin + performance.now();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    LOG_LEVEL: "silent",
    DATA_DIR: ca.dir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
  });
  const resolver = async () => [{ address: "127.0.0.1", family: 4 as const }];
  const app = await createApp(config, { logger: pino({ level: "silent" }), webhooks: { resolver } });
  try {
    const property = await createTestProperty(app);
    const user = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const { createWebhookParts } = await import("../src/modules/webhooks/index.ts");
    const parts = createWebhookParts(app.deps, { resolver });
    const endpoints = 10;
    for (let i = 0; i < endpoints; i++) {
      await parts.service.create({ propertyId: property.id, userId: user.userId }, { url: receiver.url(`/hook/${i}`), eventTypes: ["reservation.created"] });
    }
    const emit = (tx: Parameters<Parameters<typeof app.deps.transact>[0]>[0]) =>
      recordEvent(tx, { propertyId: property.id, type: "reservation.created", occurredAt: new Date(), data: { id: "r", code: "R-1", adults: 2 } });

    // Latency: one event at a time, commit -> first attempt arriving at the receiver (first of its 10 deliveries).
    const latencies: number[] = [];
    for (let i = 0; i < 200; i++) {
      const before = receiver.received.length;
      await app.deps.transact(emit);
      const committed = wall();
      const got = await receiver.waitFor(before + endpoints, 10_000);
      latencies.push(Math.min(...got.slice(before)) - committed);
    }
    latencies.sort((a, b) => a - b);

    // Throughput: a burst of events committed in batches, timed until every delivery has arrived.
    const events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
    const start = receiver.received.length;
    const t0 = performance.now();
    for (let i = 0; i < events; i += 50) {
      await app.deps.transact(async (tx) => {
        for (let j = i; j < Math.min(events, i + 50); j++) await emit(tx);
      });
    }
    const committedSeconds = (performance.now() - t0) / 1000;
    await receiver.waitFor(start + events * endpoints, 120_000);
    const seconds = (performance.now() - t0) / 1000;
    // Arrival is not the end of a delivery: it counts once its attempt is recorded (succeeded) in the database.
    const pending = async () =>
      Number((await app.deps.db.pool.query<{ n: string }>("select count(*) as n from webhook_deliveries where status <> 'succeeded'")).rows[0]?.n);
    while ((await pending()) > 0 && performance.now() - t0 < 180_000) await new Promise((r) => setTimeout(r, 5));
    const settledSeconds = (performance.now() - t0) / 1000;
    const { rows: outcome } = await app.deps.db.pool.query<{ succeeded: string; other: string; attempts: string }>(
      "select count(*) filter (where status = 'succeeded') as succeeded, count(*) filter (where status <> 'succeeded') as other, (select count(*) from webhook_attempts) as attempts from webhook_deliveries",
    );
    const total = events * endpoints;
    const row = (name: string, value: string, note = "") => console.log(`${name.padEnd(52)} ${value.padStart(10)}${note === "" ? "" : `  ${note}`}`);
    console.log("\n10 addresses, HTTPS, signed; the receiver runs in its own process");
    row("case", "value");
    row("deliveries/s, commit to arrival", String(Math.round(total / seconds)), `target >= 1000 (${total} deliveries of ${events} events in ${seconds.toFixed(2)} s; all committed after ${committedSeconds.toFixed(2)} s)`);
    row("deliveries/s, commit to recorded succeeded", String(Math.round(total / settledSeconds)), `(${settledSeconds.toFixed(2)} s)`);
    row("commit -> first attempt p50 ms", percentile(latencies, 50).toFixed(1), `(${latencies.length} single events)`);
    row("commit -> first attempt p99 ms", percentile(latencies, 99).toFixed(1), "target < 1000");
    row("RSS MiB (service process, now / peak)", `${rssMiB()} / ${Math.round(process.resourceUsage().maxRSS / 1024)}`);
    row("deliveries succeeded / not / attempt rows", `${outcome[0]?.succeeded} / ${outcome[0]?.other} / ${outcome[0]?.attempts}`);
    if (Number(outcome[0]?.other) !== 0 || Number(outcome[0]?.succeeded) !== total + latencies.length * endpoints) throw new Error("not every delivery succeeded exactly once");
    await parts.sender.close();
  } finally {
    await app.close();
    await receiver.close();
    await database.stop();
  }
}
