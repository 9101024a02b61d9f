import type pg from "pg";
import { clientLimitSql } from "../auth/index.ts";
import { runQuery } from "../../db/queryable.ts";

export interface Hit {
  /** Each bucket's count in the current window, this request included. */
  counts: Map<string, number>;
  /** api_clients.rate_limit_per_minute of the client asked for, read in the same statement. */
  clientLimit: number | undefined;
}

/** One request to count in one bucket (a call in a single bucket: a client, a staff session, an anonymous IP). */
export interface Count {
  bucket: string;
  windowStart: Date;
  clientId: string | undefined;
  /** The limit when the client has none of its own (api_clients.rate_limit_per_minute, read in the statement). */
  limit: number;
}

export interface RateLimitRepository {
  /**
   * Counts one request in every bucket's window with one atomic upsert (one round trip).
   */
  hit(buckets: readonly string[], windowStart: Date, clientId?: string): Promise<Hit>;
  /** Deletes windows that started before `before`. */
  purgeBefore(before: Date): Promise<number>;
}

const UPSERT = "on conflict (bucket, window_start) do update set count = rate_limits.count + 1";

/**
 * One request counted in bucket `bucket`'s window `windowStart` (SQL expressions), returning `count` and the
 * client's own limit (`client_limit`, null without a client). The idempotency claim's statement counts a keyed
 * write with it (a CTE), so the count and the claim take one round trip (idempotency.repository.ts).
 */
export function countSql(bucket: string, windowStart: string, clientId: string): string {
  return `insert into rate_limits (bucket, window_start, count) values (${bucket}, ${windowStart}, 1) ${UPSERT}
           returning count, ${clientLimitSql("requests", clientId)} as client_limit`;
}

// Named statements: parsed once per pooled connection.
const ONE = {
  name: "rl_one",
  text: `insert into rate_limits (bucket, window_start, count) values ($1, $2, 1) ${UPSERT} returning count`,
};
const CLIENT = { name: "rl_client", text: countSql("$1", "$2", "$3") };
// Buckets in sorted order, so two requests touching the same pair of rows lock them in the same order.
const MANY = {
  name: "rl_many",
  text: `insert into rate_limits (bucket, window_start, count) select b, $2, 1 from unnest($1::text[]) as b order by b ${UPSERT} returning bucket, count`,
};

export function createRateLimitRepository(pool: pg.Pool): RateLimitRepository {
  return {
    async hit(buckets, windowStart, clientId) {
      if (buckets.length === 1) {
        const bucket = buckets[0]!;
        if (clientId === undefined) {
          const r = await runQuery<{ count: number }>(pool, ONE, [bucket, windowStart]);
          return { counts: new Map([[bucket, r.rows[0]!.count]]), clientLimit: undefined };
        }
        const r = await runQuery<{ count: number; client_limit: number | null }>(pool, CLIENT, [
          bucket,
          windowStart,
          clientId,
        ]);
        const row = r.rows[0]!;
        return { counts: new Map([[bucket, row.count]]), clientLimit: row.client_limit ?? undefined };
      }
      const distinct = [...new Set(buckets)];
      const r = await runQuery<{ bucket: string; count: number }>(pool, MANY, [distinct, windowStart]);
      return { counts: new Map(r.rows.map((row) => [row.bucket, row.count])), clientLimit: undefined };
    },

    async purgeBefore(before) {
      const r = await pool.query("delete from rate_limits where window_start < $1", [before]);
      return r.rowCount ?? 0;
    },
  };
}
