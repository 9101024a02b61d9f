// ARI push (`npm run bench -- push`): 1,000 ARI changes a second across 20 properties for BENCH_SECONDS (default 10),
// as 100 writes a second of 10 changes each (a change: one rate plan x room type range with a price), through the
// inventory's batch write (the transaction partners' and staff writes use) in an API-role app on its own pool, while
// the app of the worker role pushes and delivers (both in this process, so they share its event loop). One partner client listens with one
// callback address (ari.updated) served by an HTTPS receiver in its own process. Printed: pushes made, delivery
// latency from each write's commit to the arrival of the first push numbered at or after the feed head seen right
// after that write (an upper bound of the change's own latency; target p99 < 5 s, the coalescing window is 1 s), and
// whether every coalesced batch (every ari.updated event) arrived exactly once.
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { poolQueryable } from "../src/db/queryable.ts";
import { ariHead } from "../src/modules/inventory/index.ts";
import { createWebhookParts } from "../src/modules/webhooks/index.ts";
import { createPartnerRoomTypeCodes } from "../src/modules/connectivity/index.ts";
import { createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { createTestCa } from "../test/helpers/https-receiver.ts";
import { benchDatabase } from "./harness.ts";

interface Arrival {
  at: number;
  id: string;
  property: string;
  seq: string;
  part: number;
  cells: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function benchPush(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const properties = 20;
  const changesPerWrite = 10;
  const writesPerSecond = 100;
  const database = await benchDatabase();
  const ca = createTestCa();
  writeFileSync(join(ca.dir, "srv.key.pem"), ca.key);
  writeFileSync(join(ca.dir, "srv.crt.pem"), ca.cert);
  const child = fork(join(import.meta.dirname, "push-receiver.ts"), [
    join(ca.dir, "srv.key.pem"),
    join(ca.dir, "srv.crt.pem"),
  ]);
  const arrivals: Arrival[] = [];
  const port = await new Promise<number>((resolve) =>
    child.on("message", (m: unknown) => {
      if (Array.isArray(m)) arrivals.push(...(m as Arrival[]));
      else resolve((m as { port: number }).port);
    }),
  );
  const wall = () => performance.timeOrigin + performance.now();
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    LOG_LEVEL: "silent",
    DATA_DIR: ca.dir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
  };
  const config = loadConfig(env);
  const resolver = async () => [{ address: "127.0.0.1", family: 4 as const }];
  const app = await createApp(config, { logger: pino({ level: "silent" }), webhooks: { resolver } });
  // The writes come from an API-role app on its own pool (as API processes write and workers push in production).
  const writer = await createApp(loadConfig({ ...env, ROLE: "api" }), { logger: pino({ level: "silent" }) });
  const parts = createWebhookParts(app.deps, createPartnerRoomTypeCodes(app.db.pool), { resolver });
  try {
    const inv = app.services.inventory;
    const props: { id: string; code: string; rt: string; plans: string[] }[] = [];
    for (let i = 0; i < properties; i++) {
      const p = await createTestProperty(app, { code: `PUSH-${i}`, businessDate: "2027-01-01" });
      const rt = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
      await inv.createRoom(p.id, { number: "101", roomTypeId: rt.id });
      const plans: string[] = [];
      for (const code of ["BAR", "NRF"])
        plans.push(
          (await inv.createRatePlan(p.id, { code, name: code, boardType: "ROOM_ONLY", roomTypeIds: [rt.id] })).id,
        );
      props.push({ id: p.id, code: p.code, rt: rt.id, plans });
    }
    const client = await createTestClient(app, {
      provider: "bench",
      propertyCodes: props.map((p) => p.code),
      scopes: ["ari.read", "ari.write"],
      approved: true,
    });
    await parts.callbacks.create({
      clientId: client.clientId,
      propertyId: null,
      url: `https://receiver.test:${port}/ari`,
      eventTypes: ["ari.updated"],
      createdBy: null,
    });
    // let the pusher see the (empty) properties once
    await new Promise((r) => setTimeout(r, 500));
    // each write from its call to its commit (the writer's own time, queueing for a connection included)
    const wlat: number[] = [];

    const q = poolQueryable(writer.db.pool);
    const writes: { property: string; at: number; head: bigint }[] = [];
    const started = performance.now();
    let n = 0;
    let failed = 0;
    const inFlight = new Set<Promise<void>>();
    while (performance.now() - started < seconds * 1000) {
      const due = Math.floor(((performance.now() - started) / 1000) * writesPerSecond);
      // at most 16 writes in flight (the pool's size): a write that cannot start on time is late, not piled up
      while (n < due && inFlight.size < 16) {
        const p = props[n % properties]!;
        const k = n++;
        const work = (async () => {
          const changes = Array.from({ length: changesPerWrite }, (_, j) => {
            const day = (k * changesPerWrite + j) % 300;
            const from = new Date(Date.UTC(2027, 1, 1) + day * 86_400_000).toISOString().slice(0, 10);
            const to = new Date(Date.UTC(2027, 1, 2) + day * 86_400_000).toISOString().slice(0, 10);
            return {
              ratePlanId: p.plans[j % 2]!,
              roomTypeId: p.rt,
              from,
              to,
              weekdays: [],
              priceMinor: BigInt(10_000 + k),
            };
          });
          const t0 = performance.now();
          await writer.services.inventory.writeAri(p.id, changes);
          wlat.push(performance.now() - t0);
          const at = wall();
          writes.push({ property: p.code, at, head: await ariHead(q, p.id) });
        })();
        inFlight.add(work);
        void work
          .catch((err: unknown) => {
            failed++;
            if (failed === 1) console.error("write failed:", err);
          })
          .finally(() => inFlight.delete(work));
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.allSettled(inFlight);
    const elapsed = (performance.now() - started) / 1000;
    // drain: every push numbered at the last head of each property has arrived (or 30 s)
    const lastHead = new Map<string, bigint>();
    for (const w of writes) if ((lastHead.get(w.property) ?? 0n) < w.head) lastHead.set(w.property, w.head);
    const deadline = Date.now() + 30_000;
    const covered = () =>
      [...lastHead].every(([code, head]) => arrivals.some((a) => a.property === code && BigInt(a.seq) >= head));
    while (!covered() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1_000));

    const byProperty = new Map<string, Arrival[]>();
    for (const a of [...arrivals].sort((x, y) => x.at - y.at)) {
      const list = byProperty.get(a.property) ?? [];
      list.push(a);
      byProperty.set(a.property, list);
    }
    const latencies: number[] = [];
    let undelivered = 0;
    for (const w of writes) {
      const hit = (byProperty.get(w.property) ?? []).find((a) => BigInt(a.seq) >= w.head && a.at >= w.at - 1);
      if (hit === undefined) undelivered++;
      else latencies.push(hit.at - w.at);
    }
    latencies.sort((a, b) => a - b);
    const { rows } = await app.db.pool.query<{ id: string }>(
      "select id from partner_events where type = 'ari.updated' and client_id = $1",
      [client.clientId],
    );
    const counts = new Map<string, number>();
    for (const a of arrivals) counts.set(a.id, (counts.get(a.id) ?? 0) + 1);
    const twice = [...counts.values()].filter((c) => c > 1).length;
    const missing = rows.filter((r) => !counts.has(r.id)).length;
    const cells = arrivals.reduce((s, a) => s + a.cells, 0);
    const changes = writes.length * changesPerWrite;
    console.log(
      `ARI changes: ${changes} in ${elapsed.toFixed(1)} s = ${(changes / elapsed).toFixed(0)}/s (${writes.length} writes of ${changesPerWrite}, ${properties} properties; target ${writesPerSecond * changesPerWrite}/s${failed > 0 ? `; ${failed} writes failed` : ""})`,
    );
    console.log(
      `pushes (ari.updated events): ${rows.length}, requests received: ${arrivals.length}, cells pushed: ${cells}; ` +
        `delivered twice: ${twice}, never delivered: ${missing}`,
    );
    console.log(
      `delivery latency, write commit -> push arrival: p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${(latencies.at(-1) ?? 0).toFixed(0)} ms ` +
        `(target p99 < 5000 ms)${undelivered > 0 ? `; ${undelivered} writes not covered by a push` : ""}`,
    );
    wlat.sort((a, b) => a - b);
    console.log(
      `write (batch of ${changesPerWrite}) latency: p50 ${percentile(wlat, 50).toFixed(0)} ms, p99 ${percentile(wlat, 99).toFixed(0)} ms`,
    );
  } finally {
    await parts.sender.close();
    await writer.close();
    await app.close();
    child.kill();
    await database.stop();
  }
}
