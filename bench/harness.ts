import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { pino } from "pino";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../src/db/embedded.ts";
import { freePort } from "../test/global-setup.ts";

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** One embedded PostgreSQL for the whole bench run, in a temporary directory. */
export async function benchDatabase(): Promise<EmbeddedDatabase & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "hotelops-bench-"));
  const pg = await startEmbeddedPostgres({ dir, port: await freePort(), logger: pino({ level: "silent" }) });
  return {
    ...pg,
    dir,
    async stop() {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  body?: string;
  headers?: Record<string, string>;
  connections?: number;
  seconds?: number;
  /** autocannon replaces `[<id>]` anywhere in the request (url, headers, body) with a unique id; keeps the worker thread. */
  idReplacement?: boolean;
  /** Absolute path of a CommonJS module whose default export customises each connection (autocannon setupClient). */
  setupClient?: string;
}

export async function load(name: string, opts: LoadOptions): Promise<Result> {
  const run = await autocannon({
    url: opts.url,
    method: opts.method ?? "GET",
    connections: opts.connections ?? 50,
    // The load generator runs in its own thread so it does not share the server's event loop.
    workers: 1,
    duration: opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 8),
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    headers: opts.headers ?? {},
    ...(opts.idReplacement ? { idReplacement: true } : {}),
    // in workers mode autocannon takes a file path where its types say function
    ...(opts.setupClient !== undefined
      ? { setupClient: opts.setupClient as unknown as (client: autocannon.Client) => void }
      : {}),
  });
  const errors = run.errors + run.non2xx + run.timeouts;
  return { name, rps: Math.round(run.requests.average), p50: run.latency.p50, p99: run.latency.p99, errors };
}

export function table(results: Result[], baseline: Result): void {
  console.log(
    `\n${"case".padEnd(42)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"x base rps".padStart(10)} ${"x base p99".padStart(10)} errors`,
  );
  for (const r of results) {
    console.log(
      `${r.name.padEnd(42)} ${String(r.rps).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${(r.rps / baseline.rps).toFixed(2).padStart(10)} ${(r.p99 / Math.max(baseline.p99, 1)).toFixed(2).padStart(10)} ${r.errors}`,
    );
  }
}

export function rssMiB(): number {
  return Math.round(process.memoryUsage().rss / 1024 / 1024);
}
