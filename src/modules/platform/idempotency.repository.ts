import type pg from "pg";
import { runQuery, type Queryable } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { AppError, type FieldViolation } from "../../errors.ts";
import { countSql, type Count, type Hit } from "./rate-limit.repository.ts";

/** A replayable error outcome (a 4xx AppError), stored as JSON. */
export interface StoredError {
  code: string;
  message: string;
  details: FieldViolation[];
  headers: Record<string, string>;
  retryAfterSeconds?: number;
}

interface IdempotencyRecord {
  rpc: string;
  requestHash: string;
  state: "in_progress" | "done";
  response: Uint8Array | null;
  responseHeaders: [string, string][] | null;
  error: StoredError | null;
}

export interface Claim {
  caller: string;
  key: string;
  rpc: string;
  requestHash: string;
  now: Date;
  expiresAt: Date;
  /** Until then no other request may take over an in-progress claim (a process that died mid-request). */
  lockedUntil: Date;
}

/** What a request stores for its key: the response (protobuf bytes and headers) or a replayable 4xx error. */
type Outcome = { response: Uint8Array; headers: [string, string][] } | { error: StoredError; status: number };

export interface IdempotencyRepository {
  /** Claims the key in its own statement (its own transaction): true when this request must execute. */
  claim(c: Claim): Promise<boolean>;
  /**
   * Counts the request in its rate-limit window and, when it stays within its limit, claims the key: one statement
   * (one round trip) for both. The count goes back to the rate limiter, which refuses a call over its limit.
   */
  claimCounted(c: Claim, count: Count): Promise<{ hit: Hit; claimed: boolean }>;
  find(caller: string, key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Inside the RPC's transaction, when it opens: locks the claimed row, so no other request can take the key over
   * while this one's writes are uncommitted. Throws when the claim was lost (taken over after its lease).
   */
  lock(tx: Tx, c: Claim): Promise<void>;
  /**
   * Stores outcomes in the transaction of the RPCs' writes (they commit together), one statement for all (a batch
   * of deferred writes completes every key of the batch); throws when any claim was lost (nothing may commit).
   */
  completeAll(q: Queryable, items: readonly { claim: Claim; outcome: Outcome }[]): Promise<void>;
  /** Stores the outcome in a statement of its own (an RPC that opened no transaction). */
  complete(c: Claim, outcome: Outcome): Promise<void>;
  /** Gives the key back (5xx, a refusal, a transient failure) so the client can retry it. Only this claim's. */
  release(c: Claim): Promise<void>;
  purgeExpired(now: Date): Promise<number>;
}

/**
 * Takes (caller, key) for the row `values` gives (caller, key, rpc, request_hash, 'in_progress', created_at,
 * expires_at, locked_until): a new key, an expired one, or an in-progress claim past its lease. One row back
 * when taken.
 */
function claimStatement(values: string): string {
  return `insert into idempotency_keys (caller, key, rpc, request_hash, state, created_at, expires_at, locked_until)
${values}
on conflict (caller, key) do update set
  rpc = excluded.rpc, request_hash = excluded.request_hash, state = 'in_progress', response = null,
  response_status = null, response_headers = null, error = null, created_at = excluded.created_at,
  expires_at = excluded.expires_at, locked_until = excluded.locked_until
where idempotency_keys.expires_at <= excluded.created_at
   or (idempotency_keys.state = 'in_progress' and idempotency_keys.locked_until <= excluded.created_at)
returning 1`;
}

function claimValues(c: Claim): unknown[] {
  return [c.caller, c.key, c.rpc, c.requestHash, c.now, c.expiresAt, c.lockedUntil];
}

// Autocommit statements on the plain pool: each is its own short transaction, never the request's.
const CLAIM = { name: "idem_claim", text: claimStatement("values ($1, $2, $3, $4, 'in_progress', $5, $6, $7)") };
// The rate-limit count and, within the limit, the claim.
const CLAIM_COUNTED = {
  name: "idem_claim_counted",
  text: `with hit as (${countSql("$1", "$2", "$3")}),
  claim as (
    ${claimStatement("select $5::text, $6::text, $7::text, $8::text, 'in_progress', $9::timestamptz, $10::timestamptz, $11::timestamptz from hit where hit.count <= coalesce(hit.client_limit, $4::integer)")}
  )
  select count, client_limit, exists (select from claim) as claimed from hit`,
};

// A claim is identified by its created_at (a takeover after the lease writes a new one): the fencing token.
const LOCK =
  "select 1 from idempotency_keys where caller = $1 and key = $2 and state = 'in_progress' and created_at = $3 for update";
const COMPLETE = `update idempotency_keys set state = 'done', response = $4, response_headers = $5, error = $6, response_status = $7, locked_until = null
  where caller = $1 and key = $2 and state = 'in_progress' and created_at = $3 returning 1`;

// It may leave with the COMMIT (Tx.queryLast): a lost claim must fail the statement itself, so the COMMIT rolls
// back. Fewer rows than items divide by zero (22012), read as the lost claim.
const COMPLETE_ALL = `with done as (update idempotency_keys k set state = 'done', response = v.response, response_headers = v.headers,
    error = v.error, response_status = v.status, locked_until = null
  from unnest($1::text[], $2::text[], $3::timestamptz[], $4::bytea[], $5::jsonb[], $6::jsonb[], $7::int[])
    as v(caller, key, created_at, response, headers, error, status)
  where k.caller = v.caller and k.key = v.key and k.state = 'in_progress' and k.created_at = v.created_at
  returning 1)
  select 1 / (count(*) = $8)::int as completed from done`;

function completeValues(c: Claim, outcome: Outcome): unknown[] {
  const ok = "response" in outcome;
  return [
    c.caller,
    c.key,
    c.now,
    ok ? Buffer.from(outcome.response) : null,
    ok ? JSON.stringify(outcome.headers) : null,
    ok ? null : JSON.stringify(outcome.error),
    ok ? 200 : outcome.status,
  ];
}

/** The lease ran out and another request took the key: this one must not commit (its retry decides). */
function lostClaim(): AppError {
  return new AppError("request_in_progress", "This request's Idempotency-Key was taken over by a retry; retry later.", {
    retryAfterSeconds: 1,
  });
}

export function createIdempotencyRepository(pool: pg.Pool): IdempotencyRepository {
  return {
    async claim(c) {
      const r = await runQuery(pool, CLAIM, claimValues(c));
      return r.rowCount === 1;
    },

    async claimCounted(c, count) {
      const r = await runQuery<{ count: number; client_limit: number | null; claimed: boolean }>(pool, CLAIM_COUNTED, [
        count.bucket,
        count.windowStart,
        count.clientId ?? null,
        count.limit,
        ...claimValues(c),
      ]);
      const row = r.rows[0]!;
      return {
        hit: { counts: new Map([[count.bucket, row.count]]), clientLimit: row.client_limit ?? undefined },
        claimed: row.claimed,
      };
    },

    async find(caller, key) {
      const r = await runQuery<{
        rpc: string;
        request_hash: string;
        state: "in_progress" | "done";
        response: Buffer | null;
        response_headers: [string, string][] | null;
        error: StoredError | null;
      }>(
        pool,
        {
          name: "idem_find",
          text: "select rpc, request_hash, state, response, response_headers, error from idempotency_keys where caller = $1 and key = $2",
        },
        [caller, key],
      );
      const row = r.rows[0];
      if (row === undefined) return undefined;
      return {
        rpc: row.rpc,
        requestHash: row.request_hash,
        state: row.state,
        response: row.response,
        responseHeaders: row.response_headers,
        error: row.error,
      };
    },

    async lock(tx, c) {
      const rows = await tx.query(LOCK, [c.caller, c.key, c.now]);
      if (rows.length !== 1) throw lostClaim();
    },

    async completeAll(q, items) {
      const columns = items.map((i) => completeValues(i.claim, i.outcome));
      try {
        await q.query(COMPLETE_ALL, [
          ...[0, 1, 2, 3, 4, 5, 6].map((n) => columns.map((values) => values[n])),
          items.length,
        ]);
      } catch (err) {
        if ((err as { code?: unknown }).code === "22012") throw lostClaim();
        throw err;
      }
    },

    async complete(c, outcome) {
      await runQuery(pool, { name: "idem_complete", text: COMPLETE }, completeValues(c, outcome));
    },

    async release(c) {
      await runQuery(
        pool,
        {
          name: "idem_release",
          text: "delete from idempotency_keys where caller = $1 and key = $2 and state = 'in_progress' and created_at = $3",
        },
        [c.caller, c.key, c.now],
      );
    },

    async purgeExpired(now) {
      const r = await pool.query("delete from idempotency_keys where expires_at < $1", [now]);
      return r.rowCount ?? 0;
    },
  };
}
