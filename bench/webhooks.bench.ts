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
    const events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 800);
    const start = receiver.received.length;
    const t0 = performance.now();
    for (let i = 0; i < events; i += 50) {
      await app.deps.transact(async (tx) => {
        for (let j = i; j < Math.min(events, i + 50); j++) await emit(tx);
      });
    }
    await receiver.waitFor(start + events * endpoints, 120_000);
    const seconds = (performance.now() - t0) / 1000;
    const perSecond = Math.round((events * endpoints) / seconds);
    console.log(`\n${"case".padEnd(48)} ${"value".padStart(10)}`);
    console.log(`${"deliveries/s (10 addresses, HTTPS, signed)".padEnd(48)} ${String(perSecond).padStart(10)}  (target >= 1000)`);
    console.log(`${"commit -> first attempt p50 ms".padEnd(48)} ${percentile(latencies, 50).toFixed(1).padStart(10)}`);
    console.log(`${"commit -> first attempt p99 ms".padEnd(48)} ${percentile(latencies, 99).toFixed(1).padStart(10)}`);
    console.log(`${"RSS MiB".padEnd(48)} ${String(rssMiB()).padStart(10)}`);
    await parts.sender.close();
  } finally {
    await app.close();
    await receiver.close();
    await database.stop();
  }
}
