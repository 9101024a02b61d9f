// A throw-away PostgreSQL cluster from the system's server binaries (Debian's `postgresql` package), in a
// temporary directory, run as an unprivileged user: `postgres` (or `nobody`) when started by root.
// Used by `npm run test:external-pg` (scripts/test-external-pg.ts) and by the tests of several processes on one
// server (test/production/); no vitest imports here.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PG_USER = "hotelops";
export const PG_PASSWORD = "hotelops-test";

export interface PgCluster {
  dir: string;
  port: number;
  /** postgres://hotelops:...@127.0.0.1:<port>/<database> (default: the `postgres` maintenance database). */
  url(database?: string): string;
  /** Starts the server again after stop() (same data, same port). */
  start(): void;
  /** Stops the server (fast shutdown: sessions are cut, nothing committed is lost). */
  stop(): void;
  /** Stops the server if it runs and deletes the directory. */
  remove(): void;
}

/** The newest `/usr/lib/postgresql/<major>/bin` (or PG_BIN_DIR). */
export function serverBinDir(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => existsSync(join(root, d, "bin", "pg_ctl")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] === undefined)
    throw new Error(
      "no PostgreSQL server binaries under /usr/lib/postgresql: apt-get install -y postgresql (or set PG_BIN_DIR)",
    );
  return join(root, majors[0], "bin");
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** initdb + start; `settings` are extra `-c name=value` server settings. */
export async function startPgCluster(
  opts: { port?: number; settings?: Record<string, string> } = {},
): Promise<PgCluster> {
  const bin = serverBinDir();
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "hotelops-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? clusterUser() : undefined;
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const run = (cmd: string, args: string[]): void => {
    const full = join(bin, cmd);
    const r =
      user === undefined
        ? spawnSync(full, args, { encoding: "utf8" })
        : spawnSync("runuser", ["-u", user.name, "--", full, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, `${PG_PASSWORD}\n`, { mode: 0o600 });
  if (user !== undefined) chownSync(pwfile, user.uid, user.gid);
  run("initdb", [
    "-D",
    data,
    "-U",
    PG_USER,
    "--pwfile",
    pwfile,
    "--auth-host=scram-sha-256",
    "--auth-local=trust",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
    "--no-sync",
  ]);
  rmSync(pwfile);
  const settings = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: dir,
    port: String(port),
    max_connections: "300",
    // a throw-away cluster: durability off makes CREATE DATABASE and commits several times faster
    fsync: "off",
    full_page_writes: "off",
    synchronous_commit: "off",
    ...opts.settings,
  };
  const options = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(" ");
  const start = (): void =>
    run("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "30", "start"]);
  const stop = (): void => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
  start();
  let removed = false;
  // whatever happens to the caller (a hook that timed out, an uncaught error), the server does not outlive it
  const onExit = (): void => cluster.remove();
  process.once("exit", onExit);
  const cluster: PgCluster = {
    dir,
    port,
    url: (database = "postgres") => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`,
    start,
    stop,
    remove() {
      if (removed) return;
      removed = true;
      process.off("exit", onExit);
      if (existsSync(join(data, "postmaster.pid"))) {
        try {
          stop();
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/**
 * A streaming replica of `primary` (started with `wal_level=replica`, the default): pg_basebackup of the running
 * primary with -R (standby.signal and primary_conninfo written), started as a hot standby on its own port.
 */
export async function startReplica(primary: PgCluster): Promise<PgCluster> {
  const bin = serverBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "hotelops-replica-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? clusterUser() : undefined;
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const run = (cmd: string, args: string[]): void => {
    const full = join(bin, cmd);
    const r =
      user === undefined
        ? spawnSync(full, args, { encoding: "utf8" })
        : spawnSync("runuser", ["-u", user.name, "--", full, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  run("pg_basebackup", ["-d", primary.url(), "-D", data, "-R", "-X", "stream", "-c", "fast", "--no-sync"]);
  // a hot standby needs at least the primary's max_connections (startPgCluster's 300)
  const options = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c hot_standby=on -c max_connections=300 -c fsync=off`;
  const start = (): void =>
    run("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "30", "start"]);
  const stop = (): void => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
  start();
  let removed = false;
  const onExit = (): void => replica.remove();
  process.once("exit", onExit);
  const replica: PgCluster = {
    dir,
    port,
    url: (database = "postgres") => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`,
    start,
    stop,
    remove() {
      if (removed) return;
      removed = true;
      process.off("exit", onExit);
      if (existsSync(join(data, "postmaster.pid"))) {
        try {
          stop();
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return replica;
}

/** The unprivileged user a root process runs the server (and PgBouncer) as. */
export function clusterUser(): { name: string; uid: number; gid: number } {
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
      return { name, uid, gid };
    } catch {
      // try the next one
    }
  }
  throw new Error("running as root and neither a postgres nor a nobody user exists to run the server as");
}
