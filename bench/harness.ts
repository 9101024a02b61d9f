import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { pino } from "pino";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../src/db/embedded.ts";
import { freePort } from "../test/global-setup.ts";
import { startArguments } from "../scripts/start-command.ts";

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests completed (for the CPU figure). */
  requests?: number;
  /** Peak RSS (MiB) of the process that answered (the service or a bare baseline child) during this load. */
  peakMiB?: number | undefined;
  /**
   * CPU time (user + system) of that process per request, in microseconds: unlike req/s it hardly depends on what
   * else runs on the box, so it is the figure to compare on a busy machine.
   */
  cpuUs?: number | undefined;
}

/** One embedded PostgreSQL for the whole bench run: in a temporary directory, removed on stop, or kept in `dir`. */
export async function benchDatabase(dir?: string): Promise<EmbeddedDatabase & { dir: string }> {
  const home = dir ?? mkdtempSync(join(tmpdir(), "hotelops-bench-"));
  const pg = await startEmbeddedPostgres({ dir: home, port: await freePort(), logger: pino({ level: "silent" }) });
  return {
    ...pg,
    dir: home,
    async stop() {
      await pg.stop();
      if (dir === undefined) rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * A process the bench measures from the outside: the service (`node dist/main.js`, as `npm start` runs it) or a
 * bare baseline server, each a child of the bench so its memory and CPU are its own, not the load generator's.
 */
export interface Measured {
  readonly name: string;
  readonly pid: number;
  /** The HTTP port (undefined for ROLE=worker). */
  readonly port: number | undefined;
  /** RSS after start, before any load (MiB). */
  readonly idleMiB: number;
  /** Current RSS (MiB), from /proc/<pid>/status. */
  rssMiB(): number;
  /** Runs `work` while sampling this process's RSS; the peak is kept under `label` for summary(). */
  during<T>(label: string, work: () => Promise<T>): Promise<T>;
  /** "service RSS: idle 120 MiB (target <= 150); peak under load 180 MiB (<label>), ... (target <= 250)". */
  summary(): string;
  stop(): Promise<void>;
}

interface Child extends Measured {
  ports: number[];
  /** during(), also handing back the phase's peak RSS and the CPU ms the process used meanwhile. */
  sample<T>(label: string, work: () => Promise<T>): Promise<[T, number, number]>;
}

const running = new Set<Child>();
process.once("exit", () => {
  for (const m of running) process.kill(m.pid, "SIGKILL");
});

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system, ms) of a bench database's PostgreSQL: its postmaster with the children it reaped (backends
 * that ended) and the children still running.
 */
export function postgresCpuMs(dir: string): number {
  const postmaster = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
  const statOf = (pid: string | number): string[] | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    } catch {
      return undefined;
    }
  };
  const own = statOf(postmaster);
  if (own === undefined) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const f = statOf(pid);
    if (f !== undefined && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/** RSS of a process in MiB (VmRSS of /proc/<pid>/status; 0 once it has exited). */
export function processRssMiB(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? 0 : Math.round(Number(kb) / 1024);
  } catch {
    return 0;
  }
}

export interface ServiceOptions {
  /** Extra environment (ROLE, METRICS, RATE_LIMIT_*, ...). LOG_LEVEL stays the production default (info). */
  env?: Record<string, string>;
  /** Shown in summaries; default "service". */
  name?: string;
  /** Another checkout to start the service from (default: BENCH_SERVICE_DIR, else this one). */
  dir?: string;
}

/**
 * The checkout whose service the benches start: this one, or BENCH_SERVICE_DIR (another checkout of the project
 * with its node_modules, e.g. main's, to measure before and after side by side on the same box).
 */
const serviceDir = process.env.BENCH_SERVICE_DIR ?? join(import.meta.dirname, "..");

/**
 * Starts the service as production does (`npm start`'s command, Node 24, the environment of docs/operations/configuration.md) on its own
 * port against `databaseUrl`, and resolves once /readyz answers 200 (a worker: once it says it started). Its log
 * lines are read and dropped. With BENCH_CPU_PROF=<dir> it runs under `--cpu-prof` and writes its profile there
 * when stopped.
 */
export async function startService(databaseUrl: string, opts: ServiceOptions = {}): Promise<Measured> {
  const worker = opts.env?.ROLE === "worker";
  const port = await freePort();
  const profile = process.env.BENCH_CPU_PROF;
  const dir = opts.dir ?? serviceDir;
  return startChild(
    opts.name ?? (worker ? "worker" : "service"),
    [...(profile ? ["--cpu-prof", "--cpu-prof-dir", profile] : []), ...startArguments(dir)],
    {
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      ...opts.env,
    },
    worker ? undefined : port,
    worker ? "Worker started" : undefined,
    dir,
  );
}

/** A bare baseline server in its own process: `script` (under bench/) listens on $PORT, then prints "bare ready". */
export async function startBare(name: string, script: string, env: Record<string, string>): Promise<Measured> {
  const port = await freePort();
  const here = join(import.meta.dirname, "..");
  return startChild(name, [join("bench", script)], { ...env, PORT: String(port) }, port, "bare ready", here);
}

async function startChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: number | undefined,
  readyLine: string | undefined,
  cwd: string,
): Promise<Measured> {
  // ready when readyLine appears in its output, else when GET /readyz on port answers 200
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    // Log lines (stdout) go to /dev/null unless readiness is read from them: the service pays for writing
    // them, as in production, but no reader on this box competes with it for the CPU.
    stdio: ["ignore", readyLine === undefined ? "ignore" : "pipe", "pipe"],
  });
  let tail = "";
  let seen = false;
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString()).slice(-4000);
    if (readyLine !== undefined && tail.includes(readyLine)) seen = true;
  };
  child.stdout?.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${tail}`);
    const ready =
      readyLine !== undefined
        ? seen
        : await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} did not start: ${tail}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  // settle: what is loaded lazily right after start (timers, first pool connections) counts as idle
  const cpuAtStart = processCpuMs(pid);
  await new Promise((r) => setTimeout(r, 2000));
  const idleMiB = processRssMiB(pid);
  const idleCpu = (processCpuMs(pid) - cpuAtStart) / 2;
  const peaks: { label: string; mib: number }[] = [];
  const self: Child = {
    name,
    pid,
    port,
    ports: port === undefined ? [] : [port],
    idleMiB,
    rssMiB: () => processRssMiB(pid),
    async during(label, work) {
      return (await self.sample(label, work))[0];
    },
    async sample(label, work) {
      const cpu = processCpuMs(pid);
      let peak = processRssMiB(pid);
      const timer = setInterval(() => (peak = Math.max(peak, processRssMiB(pid))), 50);
      try {
        const value = await work();
        peak = Math.max(peak, processRssMiB(pid));
        peaks.push({ label, mib: peak });
        return [value, peak, processCpuMs(pid) - cpu];
      } finally {
        clearInterval(timer);
      }
    },
    summary() {
      const top = peaks.reduce((a, b) => (b.mib > a.mib ? b : a), { label: "-", mib: 0 });
      // a phase run several times (rounds) shows its highest peak once
      const byLabel = new Map<string, number>();
      for (const p of peaks) byLabel.set(p.label, Math.max(p.mib, byLabel.get(p.label) ?? 0));
      const each = [...byLabel].map(([label, mib]) => `${label} ${mib}`).join(", ");
      return `${name} (idle CPU ${idleCpu} ms/s) RSS: idle ${idleMiB} MiB (target <= 150: ${idleMiB <= 150 ? "met" : "MISSED"}); peak under load ${top.mib} MiB in "${top.label}" (target <= 250: ${top.mib <= 250 ? "met" : "MISSED"})${each ? `; each phase: ${each}` : ""}`;
    },
    async stop() {
      running.delete(self);
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killed);
    },
  };
  running.add(self);
  return self;
}

/**
 * Runs a load phase against `port`; when a measured child (startService, startBare) listens there, its peak RSS
 * during the phase is sampled into the result and kept for its summary().
 */
export async function measured(name: string, port: number, run: () => Promise<Result>): Promise<Result> {
  const target = [...running].find((m) => m.ports.includes(port));
  if (target === undefined) return run();
  const [result, peakMiB, cpuMs] = await target.sample(name, run);
  const cpuUs = result.requests ? Math.round((cpuMs * 1000) / result.requests) : undefined;
  return { ...result, peakMiB, cpuUs };
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

/** autocannon against `url` (see measured()). */
export async function load(name: string, opts: LoadOptions): Promise<Result> {
  return measured(name, Number(new URL(opts.url).port), async () => {
    const run = await autocannon({
      url: opts.url,
      method: opts.method ?? "GET",
      connections: opts.connections ?? 50,
      // The load generator runs in its own thread so it does not share an event loop with anything in this process.
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
    const { average, total } = run.requests;
    return { name, rps: Math.round(average), p50: run.latency.p50, p99: run.latency.p99, errors, requests: total };
  });
}

export function table(results: Result[], baseline: Result): void {
  console.log(
    `\n${"case".padEnd(42)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"x base rps".padStart(10)} ${"x base p99".padStart(10)} ${"peak MiB".padStart(8)} ${"CPU us/req".padStart(10)} errors`,
  );
  for (const r of results) {
    console.log(
      `${r.name.padEnd(42)} ${String(r.rps).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${(r.rps / baseline.rps).toFixed(2).padStart(10)} ${(r.p99 / Math.max(baseline.p99, 1)).toFixed(2).padStart(10)} ${String(r.peakMiB ?? "-").padStart(8)} ${String(r.cpuUs ?? "-").padStart(10)} ${r.errors}`,
    );
  }
}

/** RSS of this (the bench's) process: for benches that still run the service in-process (see docs/contributors/benchmarks.md). */
export function rssMiB(): number {
  return Math.round(process.memoryUsage().rss / 1024 / 1024);
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
