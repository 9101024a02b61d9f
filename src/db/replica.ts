import pg from "pg";
import type { Logger } from "../lib/logger.ts";
import { poolQueryable, runQuery, type Queryable } from "./queryable.ts";

/**
 * Reads that may be served by a streaming replica (DATABASE_REPLICA_URL) as long as it is at most `maxLagMs`
 * behind the primary; otherwise, and whenever the replica fails, by the primary.
 *
 * The bound is measured in positions of the write-ahead log, not in the replica's own clock: every `pollMs` the
 * primary's current position (`pg_current_wal_lsn()`) is read, then the replica's replay position
 * (`pg_last_wal_replay_lsn()`). Every change committed on the primary before a sample whose position the replica
 * has replayed is on the replica, so the replica "holds everything up to" the time of the latest such sample. A
 * read goes to the replica only while that time is at most `maxLagMs` ago: a read never misses a change committed
 * more than `maxLagMs` before it. An idle primary does not make the replica look late (its position stays put),
 * and a replica that stops answering or replaying ages out within the bound.
 */
export interface ReplicaReads extends Queryable {
  /** Milliseconds the replica may be behind right now (Infinity when unknown); reads use it while <= maxLagMs. */
  lagMs(): number;
  /** True when the next read goes to the replica. */
  fresh(): boolean;
  close(): Promise<void>;
}

/** "16/B374D848" -> 0x16B374D848 */
function lsnOf(text: string): bigint {
  const [hi, lo] = text.split("/");
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

export function createReplicaReads(opts: {
  primary: pg.Pool;
  replicaUrl: string;
  maxLagMs: number;
  pollMs?: number;
  poolMax: number;
  logger: Logger;
  types?: pg.CustomTypesConfig;
}): ReplicaReads {
  const pollMs = opts.pollMs ?? Math.max(50, Math.min(500, Math.floor(opts.maxLagMs / 4)));
  const replica = new pg.Pool({
    connectionString: opts.replicaUrl,
    max: opts.poolMax,
    connectionTimeoutMillis: 2_000,
    application_name: "hotelops-replica",
    ...(opts.types !== undefined ? { types: opts.types } : {}),
  });
  replica.on("error", () => undefined);
  replica.on("connect", (client) =>
    client.on("error", (err) => opts.logger.warn({ err: err.message }, "replica connection failed")),
  );
  const primaryReads = poolQueryable(opts.primary);
  // primary samples of the last few bounds, oldest first
  let samples: { at: number; lsn: bigint }[] = [];
  /** Every change committed on the primary before this time is on the replica. */
  let holdsUntil = Number.NEGATIVE_INFINITY;
  let polling = false;
  let warned = false;
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const at = Date.now();
      const [p] = (await opts.primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn")).rows;
      samples.push({ at, lsn: lsnOf(p!.lsn) });
      samples = samples.filter((s) => s.at >= at - 4 * opts.maxLagMs - 4 * pollMs);
      const [r] = (
        await withTimeout(
          replica.query<{ lsn: string | null }>("select pg_last_wal_replay_lsn()::text as lsn"),
          pollMs * 4,
        )
      ).rows;
      // null: not a replica (a misconfigured URL pointing at a primary): never used
      if (r?.lsn == null) throw new Error("DATABASE_REPLICA_URL is not a streaming replica (no replay position)");
      const replayed = lsnOf(r.lsn);
      for (const s of samples) if (s.lsn <= replayed && s.at > holdsUntil) holdsUntil = s.at;
      warned = false;
    } catch (err) {
      if (!warned)
        opts.logger.warn({ err: (err as Error).message }, "replica position unknown: reads go to the primary");
      warned = true;
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), pollMs);
  timer.unref();
  void poll();
  const lagMs = () => Date.now() - holdsUntil;
  const fresh = () => lagMs() <= opts.maxLagMs;
  return {
    lagMs,
    fresh,
    async query<R = Record<string, unknown>>(text: Parameters<Queryable["query"]>[0], params: readonly unknown[] = []) {
      if (!fresh()) return primaryReads.query<R>(text, params);
      try {
        return (await runQuery(replica, typeof text === "string" ? text : text.text, params)).rows as R[];
      } catch (err) {
        // a read is safe to repeat: a replica that failed (down, restarting, a recovery conflict) is skipped until
        // its position is known again; a statement that is wrong fails again on the primary
        holdsUntil = Number.NEGATIVE_INFINITY;
        opts.logger.warn({ err: (err as Error).message }, "replica read failed: read from the primary");
        return primaryReads.query<R>(text, params);
      }
    },
    async close() {
      clearInterval(timer);
      await replica.end();
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
