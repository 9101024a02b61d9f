import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { clusterUser, freePort, PG_PASSWORD, PG_USER } from "../../scripts/pg-cluster.ts";
import { renderPgBouncerIni } from "./deploy.ts";
import { requireBinary } from "./prerequisites.ts";
import { until } from "./service-process.ts";

export interface PgBouncer {
  port: number;
  /** postgres://...@127.0.0.1:<port>/hotelops through the bouncer. */
  url: string;
  /** SIGKILL: every client and server connection it held is cut at once. */
  kill(): Promise<void>;
  /** Starts it again on the same port after kill() (does nothing while it runs). */
  start(): Promise<void>;
  remove(): void;
}

/**
 * Debian's PgBouncer (/usr/sbin/pgbouncer) with deploy/pgbouncer/pgbouncer.ini (transaction pooling) in front of
 * database `hotelops` of a test cluster, as the cluster's unprivileged user when run by root (PgBouncer refuses to run as root).
 */
export async function startPgBouncer(serverPort: number, settings: Record<string, string> = {}): Promise<PgBouncer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  writeFileSync(join(dir, "userlist.txt"), `"${PG_USER}" "${PG_PASSWORD}"\n`);
  // deploy/pgbouncer/pgbouncer.ini as shipped, with this test's ports and files
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    renderPgBouncerIni({ listenPort: port, serverPort, authFile: join(dir, "userlist.txt"), settings }),
  );
  const command = [requireBinary("pgbouncer", "pgbouncer"), join(dir, "pgbouncer.ini")];
  if (process.getuid?.() === 0) {
    const user = clusterUser();
    for (const f of ["", "userlist.txt", "pgbouncer.ini"]) chownSync(join(dir, f), user.uid, user.gid);
    // setpriv execs, so the pid is pgbouncer's
    command.unshift("setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups");
  }
  const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/hotelops`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
    let log = "";
    child = spawn(command[0]!, command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    child.stderr!.on("data", (c: Buffer) => (log += c.toString()));
    child.stdout!.on("data", (c: Buffer) => (log += c.toString()));
    await until(
      async () => {
        const c = new pg.Client({ connectionString: url });
        c.on("error", () => undefined);
        return c.connect().then(
          async () => (await c.end(), true),
          () => false,
        );
      },
      15_000,
      "pgbouncer up",
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${log}`);
    });
  };
  await start();
  return {
    port,
    url,
    async kill() {
      const c = child;
      if (c === undefined || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await exited;
    },
    start,
    remove() {
      child?.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
