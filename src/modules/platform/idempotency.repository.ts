import type pg from "pg";
import type { FieldViolation } from "../../errors.ts";

/** A replayable error outcome (a 4xx AppError), stored as JSON. */
export interface StoredError {
  code: string;
  message: string;
  details: FieldViolation[];
  headers: Record<string, string>;
  retryAfterSeconds?: number;
}

export interface IdempotencyRecord {
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

export interface IdempotencyRepository {
  /** Claims the key in its own statement (its own transaction): true when this request must execute. */
  claim(c: Claim): Promise<boolean>;
  find(caller: string, key: string): Promise<IdempotencyRecord | undefined>;
  complete(caller: string, key: string, outcome: { response: Uint8Array; headers: [string, string][] } | { error: StoredError; status: number }): Promise<void>;
  /** Gives the key back (5xx or a transient failure) so the client can retry it. */
  release(caller: string, key: string): Promise<void>;
  purgeExpired(now: Date): Promise<number>;
}

/**
 * Takes (caller, key) for the row `values` gives (caller, key, rpc, request_hash, 'in_progress', created_at,
 * expires_at, locked_until): a new key, an expired one, or an in-progress claim past its lease. One row back
 * when taken. Also run inside the rate-limit statement (rate-limit.repository.ts).
 */
export function claimStatement(values: string): string {
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

export function claimValues(c: Claim): unknown[] {
  return [c.caller, c.key, c.rpc, c.requestHash, c.now, c.expiresAt, c.lockedUntil];
}

// Autocommit statements on the plain pool: each is its own short transaction, never the request's.
const CLAIM = claimStatement("values ($1, $2, $3, $4, 'in_progress', $5, $6, $7)");

export function createIdempotencyRepository(pool: pg.Pool): IdempotencyRepository {
  return {
    async claim(c) {
      const r = await pool.query({ name: "idem_claim", text: CLAIM, values: claimValues(c) });
      return r.rowCount === 1;
    },

    async find(caller, key) {
      const r = await pool.query<{ rpc: string; request_hash: string; state: "in_progress" | "done"; response: Buffer | null; response_headers: [string, string][] | null; error: StoredError | null }>({
        name: "idem_find",
        text: "select rpc, request_hash, state, response, response_headers, error from idempotency_keys where caller = $1 and key = $2",
        values: [caller, key],
      });
      const row = r.rows[0];
      if (row === undefined) return undefined;
      return { rpc: row.rpc, requestHash: row.request_hash, state: row.state, response: row.response, responseHeaders: row.response_headers, error: row.error };
    },

    async complete(caller, key, outcome) {
      const ok = "response" in outcome;
      await pool.query({
        name: "idem_complete",
        text: `update idempotency_keys set state = 'done', response = $3, response_headers = $4, error = $5, response_status = $6, locked_until = null
               where caller = $1 and key = $2`,
        values: [caller, key, ok ? Buffer.from(outcome.response) : null, ok ? JSON.stringify(outcome.headers) : null, ok ? null : JSON.stringify(outcome.error), ok ? 200 : outcome.status],
      });
    },

    async release(caller, key) {
      await pool.query({ name: "idem_release", text: "delete from idempotency_keys where caller = $1 and key = $2 and state = 'in_progress'", values: [caller, key] });
    },

    async purgeExpired(now) {
      const r = await pool.query("delete from idempotency_keys where expires_at < $1", [now]);
      return r.rowCount ?? 0;
    },
  };
}
