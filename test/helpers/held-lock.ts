import pg from "pg";
import { until } from "./service-process.ts";

/** Backends that wait on a lock the current session holds. */
const waitersSql = "select pid from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))";

export interface HeldLock {
  /** Resolves once a backend waits on the lock (a worker's job is then inside its database work). */
  waitedOn(ms: number): Promise<void>;
  /**
   * Ends the lock: first terminates the backends still waiting on it (a killed worker's: PostgreSQL notices a gone
   * client only when it next writes to it, so the waiting statement would otherwise run, and commit when it was sent
   * with its COMMIT), then rolls back. The job the killed worker held stays active with nobody working it.
   */
  release(): Promise<number>;
}

/**
 * A transaction of the test's own that holds a lock (`lockSql`, e.g. `lock table t in share mode` or a row's
 * `for update`) so that a job waits inside its database work until the test lets it go: how a test holds a job in
 * flight while it kills the worker that runs it.
 */
export async function holdLock(databaseUrl: string, lockSql: string, params: unknown[] = []): Promise<HeldLock> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("begin");
  await client.query(lockSql, params);
  return {
    async waitedOn(ms) {
      await until(async () => (await client.query(waitersSql)).rows.length > 0, ms, "a job waiting on the held lock");
    },
    async release() {
      const { rows } = await client.query(`select pg_terminate_backend(pid) from (${waitersSql}) w`);
      await client.query("rollback");
      await client.end();
      return rows.length;
    },
  };
}
