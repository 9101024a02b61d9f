import type pg from "pg";
import { clientLimitSql } from "../auth/index.ts";
import { claimStatement, claimValues, type Claim } from "./idempotency.repository.ts";
import { runQuery } from "../../db/queryable.ts";

interface Hit {
  /** Each bucket's count in the current window, this request included. */
  counts: Map<string, number>;
  /** api_clients.rate_limit_per_minute of the client asked for, read in the same statement. */
  clientLimit: number | undefined;
  /** Whether the idempotency claim passed to hit() was taken (undefined when none was passed). */
  claimed?: boolean;
}

/** An idempotency claim to try in the same statement, unless this request goes over `limit` (`clientLimit` first). */
interface ClaimWithHit {
  claim: Claim;
  limit: number;
}

export interface RateLimitRepository {
  /**
   * Counts one request in every bucket's window with one atomic upsert (one round trip). With one bucket and a
   * claim, the same statement also claims the idempotency key when the request stays within its limit.
   */
  hit(buckets: readonly string[], windowStart: Date, clientId?: string, claim?: ClaimWithHit): Promise<Hit>;
  /** Deletes windows that started before `before`. */
  purgeBefore(before: Date): Promise<number>;
}

const UPSERT = "on conflict (bucket, window_start) do update set count = rate_limits.count + 1";

// Named statements: parsed once per pooled connection.
const ONE = {
  name: "rl_one",
  text: `insert into rate_limits (bucket, window_start, count) values ($1, $2, 1) ${UPSERT} returning count`,
};
const CLIENT = {
  name: "rl_client",
  text: `insert into rate_limits (bucket, window_start, count) values ($1, $2, 1) ${UPSERT}
         returning count, ${clientLimitSql("requests", "$3")} as client_limit`,
};
// The single-bucket count and, within the limit, the idempotency claim: one round trip for the write path.
const CLAIMING = {
  name: "rl_claim",
  text: `with hit as (
           insert into rate_limits (bucket, window_start, count) values ($1, $2, 1) ${UPSERT}
           returning count, ${clientLimitSql("requests", "$3")} as client_limit
         ), claim as (
           ${claimStatement("select $5::text, $6::text, $7::text, $8::text, 'in_progress', $9::timestamptz, $10::timestamptz, $11::timestamptz from hit where hit.count <= coalesce(hit.client_limit, $4::integer)")}
         )
         select count, client_limit, exists (select from claim) as claimed from hit`,
};
// Buckets in sorted order, so two requests touching the same pair of rows lock them in the same order.
const MANY = {
  name: "rl_many",
  text: `insert into rate_limits (bucket, window_start, count) select b, $2, 1 from unnest($1::text[]) as b order by b ${UPSERT} returning bucket, count`,
};

export function createRateLimitRepository(pool: pg.Pool): RateLimitRepository {
  return {
    async hit(buckets, windowStart, clientId, claim) {
      if (buckets.length === 1) {
        const bucket = buckets[0]!;
        if (claim !== undefined) {
          const r = await runQuery<{ count: number; client_limit: number | null; claimed: boolean }>(pool, CLAIMING, [
            bucket,
            windowStart,
            clientId ?? null,
            claim.limit,
            ...claimValues(claim.claim),
          ]);
          const row = r.rows[0]!;
          return {
            counts: new Map([[bucket, row.count]]),
            clientLimit: row.client_limit ?? undefined,
            claimed: row.claimed,
          };
        }
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
