import type pg from "pg";
import { runQuery, type Queryable, type Statement } from "./queryable.ts";

/** How the work of a pooled transaction ends it itself (otherwise COMMIT follows once the work returns). */
export interface Ending {
  /**
   * Sends COMMIT now, together with statements already sent (`alongside`: pipelined, so they cost no round trip of
   * their own); resolves once all succeeded. After a failed statement PostgreSQL answers COMMIT with a rollback (no
   * error), so that statement's rejection is the outcome.
   */
  commit(alongside?: readonly Promise<unknown>[]): Promise<void>;
}

export interface PooledOptions {
  /** The BEGIN statement (an isolation level, read only). Default: `begin`. */
  begin?: string;
  /** Waits for the connection (a deadline may abandon the wait). Default: the pool's connect(). */
  connect?: (pool: pg.Pool) => Promise<pg.PoolClient>;
  /** Sent on the connection right before BEGIN (a statement that commits on its own, see transaction.ts Ahead). */
  beforeBegin?: (q: Queryable) => void;
}

/**
 * The one place that opens, commits and rolls back a database transaction; `transact` (transaction.ts) builds
 * the modules' Tx on it. Used directly for a transaction of its own that must stay outside a request's held
 * transaction (held-transaction.ts): a signing key, a booking's lock, a batch of rows written by the job queue.
 *
 * BEGIN goes out with the work's first statements (node-postgres pipelines a connection's statements; BEGIN fails
 * only with its connection, which fails the statements behind it too). A connection that dies while checked out
 * emits 'error' on the client (the pool takes its own listener off while it is lent): it is remembered, and the
 * connection is discarded instead of returned to the pool.
 */
export async function pooledTransaction<T>(
  pool: pg.Pool,
  work: (q: Queryable, client: pg.PoolClient, ending: Ending) => Promise<T>,
  options: PooledOptions = {},
): Promise<T> {
  const client = await (options.connect?.(pool) ?? pool.connect());
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken ??= err;
  };
  client.on("error", onError);
  let end = "open" as "open" | "sent" | "committed";
  const ending: Ending = {
    async commit(alongside = []) {
      if (end !== "open") throw new Error("the transaction was already ended");
      end = "sent";
      await Promise.all([client.query("commit"), ...alongside]);
      end = "committed";
    },
  };
  const q: Queryable = {
    query: async <R>(text: string | Statement, params: readonly unknown[] = []) =>
      (await runQuery(client, text, params)).rows as R[],
  };
  try {
    options.beforeBegin?.(q);
    const [begun, worked] = await Promise.allSettled([client.query(options.begin ?? "begin"), work(q, client, ending)]);
    if (begun.status === "rejected") throw begun.reason;
    if (worked.status === "rejected") throw worked.reason;
    if (end === "open") await ending.commit();
    return worked.value;
  } catch (err) {
    if (end !== "committed")
      await client.query("rollback").catch((e: unknown) => {
        broken ??= e instanceof Error ? e : new Error(String(e));
      });
    throw err;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}
