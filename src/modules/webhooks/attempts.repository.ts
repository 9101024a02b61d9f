import type pg from "pg";
import { runQuery, statementFamily, type Queryable } from "../../db/queryable.ts";
import { newId } from "../../lib/ids.ts";
import type { Claimed, Finished } from "./deliveries.repository.ts";
import { testEventType } from "./event-types.ts";

/**
 * What an attempt's outcome writes: its attempt row, the delivery settled, and the address's health (failure
 * counts, the automatic close). Successes of a batch go in one statement; a failure settles in its own transaction.
 */

/** An attempt whose worker died (its lease lapsed): recorded as interrupted; the receiver may or may not have seen it. */
export async function insertInterruptedAttempts(pool: pg.Pool, claimed: readonly Claimed[]): Promise<void> {
  await pool.query(
    `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
     select u.id, u.property_id, u.endpoint_id, u.delivery_id, u.event_id, u.event_type, u.attempt, null, 0, 'interrupted', 'the worker stopped during the attempt; retried', u.at, u.at
     from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::int[], $8::timestamptz[])
       as u(id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, at)
     on conflict (delivery_id, attempt) do nothing`,
    [
      claimed.map(() => newId()),
      claimed.map((c) => c.property_id),
      claimed.map((c) => c.endpoint_id),
      claimed.map((c) => c.id),
      claimed.map((c) => c.event_id),
      claimed.map((c) => (c.is_test ? testEventType : c.event_type)),
      claimed.map((c) => c.attempts - 1),
      claimed.map((c) => c.lapsed_lease!.toISOString()),
    ],
  );
}

/** recordSuccesses's fixed text, named: every delivered batch runs it (planned once per connection). */
const recordSuccessesStatement = statementFamily("webhooks_record_successes", 1);

/**
 * Successes of a batch in one statement: the attempt rows, the deliveries settled, and the addresses'
 * failure counts reset (written only when there is something to reset or last_success_at is a minute
 * old, so concurrent batches do not queue on address rows). Address rows are locked first and in id
 * order, as the failure path locks the address before its deliveries: no deadlock between the two.
 */
export async function recordSuccesses(pool: pg.Pool, done: readonly Finished[], startedAt: Date): Promise<void> {
  const last = new Date(Math.max(...done.map((f) => f.finishedAt.getTime())));
  await runQuery(
    pool,
    recordSuccessesStatement(`with e as (
       update webhook_endpoints set last_success_at = $1, failing_since = null, failures_since_success = 0
       where id in (
         select id from webhook_endpoints
         where id = any($2::uuid[]) and (failing_since is not null or failures_since_success <> 0 or last_success_at is null or last_success_at < $1::timestamptz - interval '1 minute')
         order by id for update)
       returning id
     ), a as (
       insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
       select u.id, u.property_id, u.endpoint_id, u.delivery_id, u.event_id, u.event_type, u.attempt, u.http_status, u.duration_ms, null, null, $3, u.finished_at
       from unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::uuid[], $9::text[], $10::int[], $11::int[], $12::int[], $13::timestamptz[])
         as u(id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, finished_at)
       -- a holder too slow for its lease: the taker recorded this attempt as interrupted and owns the delivery now
       on conflict (delivery_id, attempt) do nothing
     )
     update webhook_deliveries dl set status = 'succeeded', next_attempt_at = null, lease_until = null, last_http_status = u.http_status, last_error_class = null
     from unnest($7::uuid[], $10::int[], $11::int[]) as u(delivery_id, attempt, http_status)
     where dl.id = u.delivery_id and dl.attempts = u.attempt and dl.status = 'pending' and (select count(*) from e) >= 0`),
    [
      last,
      [...new Set(done.map((f) => f.c.endpoint_id))],
      startedAt,
      done.map(() => newId()),
      done.map((f) => f.c.property_id),
      done.map((f) => f.c.endpoint_id),
      done.map((f) => f.c.id),
      done.map((f) => f.c.event_id),
      done.map((f) => f.c.event_type),
      done.map((f) => f.c.attempts),
      done.map((f) => f.result.httpStatus),
      done.map((f) => f.result.durationMs),
      done.map((f) => f.finishedAt.toISOString()),
    ],
  );
}

/** One attempt row (a failure or a test delivery); an attempt recorded before (as interrupted) stays as it was. */
export async function insertAttempt(tx: Queryable, f: Finished, startedAt: Date): Promise<void> {
  const { c, result: r } = f;
  // Real-time id: history is ordered by (started_at, id) and the test clock may stand still.
  await tx.query(
    `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) on conflict (delivery_id, attempt) do nothing`,
    [
      newId(),
      c.property_id,
      c.endpoint_id,
      c.id,
      c.event_id,
      c.is_test ? testEventType : c.event_type,
      c.attempts,
      r.httpStatus,
      r.durationMs,
      r.errorClass,
      r.errorMessage,
      startedAt,
      f.finishedAt,
    ],
  );
}

/** Settles the delivery; only the holder of this attempt may (a lease taken over after a crash moves `attempts` on). */
export async function settleDelivery(
  tx: Queryable,
  f: Finished,
  status: "pending" | "succeeded" | "failed" | "cancelled",
  next: Date | null,
): Promise<void> {
  await tx.query(
    `update webhook_deliveries set status = $2, next_attempt_at = $3, lease_until = null, last_http_status = $4, last_error_class = $5
     where id = $1 and attempts = $6 and status = 'pending'`,
    [f.c.id, status, next, f.result.httpStatus, f.result.errorClass, f.c.attempts],
  );
}

/** Counts a failure against the address (its row serializes concurrent attempts of one address). */
export async function countFailure(
  tx: Queryable,
  endpointId: string,
  startedAt: Date,
): Promise<{ failing_since: Date; failures_since_success: number; status: string } | undefined> {
  const [health] = await tx.query<{ failing_since: Date; failures_since_success: number; status: string }>(
    `update webhook_endpoints set failing_since = coalesce(failing_since, $2), failures_since_success = failures_since_success + 1
     where id = $1 returning failing_since, failures_since_success, status`,
    [endpointId, startedAt],
  );
  return health;
}

/**
 * Closes an open address and cancels its other pending deliveries; the closed address's creator and url, or
 * undefined when it was not open.
 */
export async function closeEndpoint(
  tx: Queryable,
  endpointId: string,
  keepDeliveryId: string,
  now: Date,
  reason: string,
): Promise<{ created_by: string | null; url: string } | undefined> {
  const [closed] = await tx.query<{ created_by: string | null; url: string }>(
    "update webhook_endpoints set status = 'closed', closed_at = $2, closed_reason = $3, updated_at = $2 where id = $1 and status = 'open' returning created_by, url",
    [endpointId, now, reason],
  );
  await tx.query(
    "update webhook_deliveries set status = 'cancelled', next_attempt_at = null, last_error_class = 'endpoint_closed' where endpoint_id = $1 and status = 'pending' and id <> $2",
    [endpointId, keepDeliveryId],
  );
  return closed;
}
