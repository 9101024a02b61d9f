// Worker capacity: one ROLE=worker process (`npm start`'s command, so under its heap limit) drains a backlog of
// partner messages (NEW, MODIFIED x3, CANCELLED for each of many bookings, as partners send them) and the webhook
// deliveries those changes cause. The backlog is written first by an API-only process (no worker running), so the
// worker's rate is measured alone: messages applied per second from the first outcome to the last (their
// processed_at), deliveries per second likewise (their delivered time). Each phase checks the work, not only the
// count: every message PROCESSED and applied once, each booking's messages applied in the order they were sent,
// each booking ending CANCELLED with its last modification's holder, every delivery succeeded once.
// BENCH_WORKER_BOOKINGS sets the number of bookings (default 400, i.e. 2,000 messages), BENCH_WORKER_CONCURRENCY
// the worker's WORKER_CONCURRENCY and BENCH_WORKER_POOL its DATABASE_POOL_MAX (default: the service's defaults).
// BENCH_WORKER_WEBHOOKS=0 leaves the webhook address out (the messages alone). BENCH_SERVICE_DIR runs another
// checkout's worker (before/after on the same box). Besides the worker's CPU per message it prints PostgreSQL's
// (the bench database's processes): with both on one box, the two together are what bounds the rate.
// BENCH_PG_STATEMENTS=1 runs the bench database with pg_stat_statements and prints the message phase's statements
// per message (calls, planning, execution with lock waits).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import pg from "pg";
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { setProviderMapping } from "../src/modules/connectivity/index.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { createTestCa } from "../test/helpers/https-receiver.ts";
import { benchDatabase, postgresCpuMs, processCpuMs, startService } from "./harness.ts";

const DAY = 86_400_000;

export async function benchWorker(): Promise<void> {
  const statements = process.env.BENCH_PG_STATEMENTS === "1";
  const database = statements ? await withStatementStats() : await benchDatabase();
  const bookings = Number(process.env.BENCH_WORKER_BOOKINGS ?? 400);
  const ca = createTestCa();
  writeFileSync(join(ca.dir, "srv.key.pem"), ca.key);
  writeFileSync(join(ca.dir, "srv.crt.pem"), ca.cert);
  const receiver = fork(join(import.meta.dirname, "webhook-receiver.ts"), [
    join(ca.dir, "srv.key.pem"),
    join(ca.dir, "srv.crt.pem"),
  ]);
  let received = 0;
  const receiverPort = await new Promise<number>((resolve) =>
    receiver.on("message", (m: unknown) => {
      if (Array.isArray(m)) received += m.length;
      else resolve((m as { port: number }).port);
    }),
  );
  const dataDir = mkdtempSync(join(tmpdir(), "bench-worker-"));
  const env = {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_EXTRA_CA_FILE: ca.caFile,
  };
  const app = await createApp(loadConfig({ ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ROLE: "api" }), {
    logger: pino({ level: "silent" }),
  });
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const sql = async <R>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as R[];
  try {
    const property = await createTestProperty(app, { code: "BENCH-W", businessDate: "2027-01-01" });
    const inventory = app.services.inventory;
    const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
    for (let n = 0; n < 10; n++) await inventory.createRoom(property.id, { number: `${100 + n}`, roomTypeId: dbl.id });
    const bar = await inventory.createRatePlan(property.id, {
      code: "BAR",
      name: "Best available",
      boardType: "ROOM_ONLY",
      roomTypeIds: [dbl.id],
    });
    await inventory.setPrices(property.id, {
      ratePlanId: bar.id,
      roomTypeId: dbl.id,
      from: "2027-01-01",
      to: "2028-12-31",
      amountMinor: 25000n,
    });
    for (const [kind, code, externalCode] of [
      ["room_type", "DBL", "X-DBL"],
      ["rate_plan", "BAR", "X-BAR"],
    ] as const)
      await setProviderMapping(app.deps.db.pool, {
        propertyCode: property.code,
        provider: "bench",
        kind,
        code,
        externalCode,
      });
    const partner = await createTestClient(app, {
      kind: "partner",
      provider: "bench",
      propertyCodes: [property.code],
      scopes: ["reservations.write", "reservations.read"],
      approved: true,
    });
    await sql("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [partner.clientId]);
    // one webhook address for every reservation change: each applied message causes one delivery
    const webhooks = process.env.BENCH_WORKER_WEBHOOKS !== "0";
    if (webhooks) {
      const manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
      const hook = await fetch(`http://127.0.0.1:${app.port}/api/panel/v1/webhook-endpoints`, {
        method: "POST",
        headers: { authorization: `Bearer ${manager.accessToken}`, "content-type": "application/json" },
        body: JSON.stringify({
          url: `https://localhost:${receiverPort}/hook`,
          eventTypes: ["reservation.created", "reservation.updated", "reservation.cancelled"],
          description: "bench",
        }),
      });
      if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${await hook.text()}`);
      await sql("update webhook_endpoints set max_per_second = 1000");
    }

    const base = `http://127.0.0.1:${app.port}/api/v1/properties/${property.code}/reservation-events`;
    const send = async (
      eventType: string,
      reference: string,
      night: number,
      holder: string,
      attempt = 0,
    ): Promise<void> => {
      const arrival = new Date(Date.UTC(2027, 0, 1) + night * DAY);
      const res = await fetch(base, {
        method: "POST",
        headers: {
          authorization: `Bearer ${partner.accessToken}`,
          "content-type": "application/json",
          "idempotency-key": `${reference}-${eventType}-${holder.replace(" ", "")}`,
        },
        body: JSON.stringify({
          eventType,
          externalReference: reference,
          channel: "Booking.com",
          arrivalDate: arrival.toISOString().slice(0, 10),
          departureDate: new Date(arrival.getTime() + DAY).toISOString().slice(0, 10),
          currency: "TRY",
          holder: { name: holder },
          notes: holder,
          rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 25000 }],
          totalMinor: 25000,
        }),
      });
      // A loaded box can keep the API's pool busy past its wait (503, Retry-After): the same idempotency key again
      if (res.status === 503 && attempt < 5) {
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, 1000));
        return send(eventType, reference, night, holder, attempt + 1);
      }
      if (res.status !== 202) throw new Error(`${eventType} ${reference}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    // NEW, MODIFIED x3, CANCELLED per booking, each sent after the previous was accepted; 32 bookings at a time
    const references = Array.from({ length: bookings }, (_, i) => `W-${i}`);
    let next = 0;
    const accepted0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < references.length) {
          const i = next++;
          const reference = references[i]!;
          const night = i % 700;
          await send("NEW", reference, night, "Guest 0");
          for (const n of [1, 2, 3]) await send("MODIFIED", reference, night, `Guest ${n}`);
          await send("CANCELLED", reference, night, "Guest 3");
        }
      }),
    );
    const messages = bookings * 5;
    console.log(
      `${messages} partner messages of ${bookings} bookings accepted in ${((performance.now() - accepted0) / 1000).toFixed(1)} s (API process, no worker)`,
    );
    await app.close();

    const concurrency = process.env.BENCH_WORKER_CONCURRENCY;
    const worker = await startService(database.url, {
      env: {
        ...env,
        ...(process.env.BENCH_WORKER_POOL !== undefined ? { DATABASE_POOL_MAX: process.env.BENCH_WORKER_POOL } : {}),
        ROLE: "worker",
        LOG_LEVEL: "warn",
        ...(concurrency !== undefined ? { WORKER_CONCURRENCY: concurrency } : {}),
      },
    });
    if (statements) await sql("select pg_stat_statements_reset()");
    const started = performance.now();
    const cpu0 = processCpuMs(worker.pid);
    const dbCpu0 = postgresCpuMs(database.dir);
    const queued = async () =>
      (await sql<{ n: number }>("select count(*)::int as n from partner_messages where status = 'QUEUED'"))[0]!.n;
    await worker.during("partner messages", async () => {
      while ((await queued()) > 0 && performance.now() - started < 300_000)
        await new Promise((r) => setTimeout(r, 200));
    });
    const cpuMs = processCpuMs(worker.pid) - cpu0;
    const dbCpuMs = postgresCpuMs(database.dir) - dbCpu0;
    const [span] = await sql<{ n: number; seconds: number; repeated: number; other: number }>(
      `select count(*)::int as n, extract(epoch from max(processed_at) - min(processed_at))::float8 as seconds,
              count(*) filter (where attempts <> 1)::int as repeated, count(*) filter (where status <> 'PROCESSED')::int as other
         from partner_messages`,
    );
    // per booking: processed in the order sent (seq) = processed_at increasing with seq
    const [order] = await sql<{ n: number }>(
      `select count(*)::int as n from (
         select external_reference, processed_at < lag(processed_at) over (partition by external_reference order by seq) as back
           from partner_messages) x where back`,
    );
    const [final] = await sql<{ n: number }>(
      "select count(*)::int as n from reservations where status = 'CANCELLED' and holder_name = 'Guest 3' and external_reference like 'W-%'",
    );
    if (statements) await printStatements(sql, span!.n);
    const rate = span!.n / Math.max(span!.seconds, 0.001);
    // CPU time of the worker process (user + system) per message, its webhook fan-out and deliveries included: the
    // capacity per core, which hardly depends on what else runs on the box (the rate above does)
    const perCore = (1000 * span!.n) / Math.max(cpuMs, 1);
    console.log(
      `partner messages: ${span!.n} applied in ${span!.seconds.toFixed(2)} s = ${Math.round(rate)} msgs/s by one ROLE=worker process` +
        ` (WORKER_CONCURRENCY ${concurrency ?? "default"}; target >= 200/s); worker CPU ${(cpuMs / span!.n).toFixed(1)} ms per message = ${Math.round(perCore)} msgs per CPU-second, PostgreSQL CPU ${(dbCpuMs / span!.n).toFixed(1)} ms per message (${webhooks ? "webhook fan-out and deliveries included" : "no webhook address"}); ${span!.other} not PROCESSED, ${span!.repeated} applied more than once,` +
        ` ${order!.n} out of order, ${final!.n} of ${bookings} bookings CANCELLED with the last holder` +
        (span!.other + span!.repeated + order!.n === 0 && final!.n === bookings ? " (checks pass)" : " (CHECKS FAIL)"),
    );
    // webhook deliveries caused by those messages (one per applied change)
    const deliveries = async () =>
      (
        await sql<{ total: number; done: number; seconds: number }>(
          `select count(*)::int as total, count(*) filter (where status = 'succeeded')::int as done,
                  coalesce(extract(epoch from max(last_attempt_at) - min(created_at)), 0)::float8 as seconds from webhook_deliveries`,
        )
      )[0]!;
    if (webhooks) {
      await worker.during("webhook deliveries", async () => {
        const until = performance.now() + 120_000;
        for (;;) {
          const d = await deliveries();
          // every applied change has its delivery (one fan-out may still be on its way when the others are done)
          if ((d.total >= span!.n && d.done === d.total) || performance.now() > until) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      });
      const d = await deliveries();
      console.log(
        `webhook deliveries: ${d.done} of ${d.total} succeeded, ${received} requests received, first created to last done ${d.seconds.toFixed(2)} s = ${Math.round(d.done / Math.max(d.seconds, 0.001))}/s (measured while the messages were applied; ${((performance.now() - started) / 1000).toFixed(1)} s after the worker started)`,
      );
    }
    console.log(worker.summary());
    await worker.stop();
  } finally {
    await pool.end();
    await app.close().catch(() => undefined);
    receiver.kill();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(ca.dir, { recursive: true, force: true });
  }
}

/**
 * BENCH_PG_STATEMENTS=1: the bench database with pg_stat_statements (a preloaded library, so started twice), to
 * count the statements of the message phase and their time (execution, lock waits included) per message.
 */
async function withStatementStats(): ReturnType<typeof benchDatabase> {
  const dir = mkdtempSync(join(tmpdir(), "hotelops-bench-"));
  const first = await benchDatabase(dir);
  const client = new pg.Client({ connectionString: first.url });
  await client.connect();
  await client.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  await client.query("alter system set pg_stat_statements.track = 'all'");
  await client.query("alter system set pg_stat_statements.track_planning = on");
  await client.end();
  await first.stop();
  const database = await benchDatabase(dir);
  const again = new pg.Client({ connectionString: database.url });
  await again.connect();
  await again.query("create extension if not exists pg_stat_statements");
  await again.end();
  return {
    ...database,
    async stop() {
      await database.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function printStatements(
  sql: <R>(text: string, params?: unknown[]) => Promise<R[]>,
  messages: number,
): Promise<void> {
  const rows = await sql<{
    calls: number;
    ms: number;
    plans: number;
    planMs: number;
    query: string;
    toplevel: boolean;
  }>(
    `select calls::float8 as calls, total_exec_time::float8 as ms, plans::float8 as plans, total_plan_time::float8 as "planMs",
            toplevel, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements where query not like '%pg_stat_statements%' order by total_exec_time + total_plan_time desc`,
  );
  const nested = rows.filter((r) => !r.toplevel);
  console.log(
    `nested statements (foreign-key checks, functions) per message: ${(nested.reduce((n, r) => n + r.calls, 0) / messages).toFixed(1)}, ${(nested.reduce((n, r) => n + r.ms, 0) / messages).toFixed(2)} ms; planning of top-level statements: ${(rows.reduce((n, r) => n + r.plans, 0) / messages).toFixed(1)} plans, ${(rows.reduce((n, r) => n + r.planMs, 0) / messages).toFixed(2)} ms per message`,
  );
  rows.splice(0, rows.length, ...rows.filter((r) => r.toplevel));
  const calls = rows.reduce((n, r) => n + r.calls, 0);
  const ms = rows.reduce((n, r) => n + r.ms, 0);
  console.log(
    `statements per message: ${(calls / messages).toFixed(1)}, their execution ${(ms / messages).toFixed(2)} ms per message (lock waits included); the top 30 by time:`,
  );
  for (const r of rows.slice(0, 30))
    console.log(
      `  ${(r.calls / messages).toFixed(2).padStart(6)}/msg ${(r.ms / messages).toFixed(3).padStart(7)} ms/msg plan ${(r.plans / messages).toFixed(2)} ${(r.planMs / messages).toFixed(3)} ms  ${r.query.slice(0, 130)}`,
    );
}
