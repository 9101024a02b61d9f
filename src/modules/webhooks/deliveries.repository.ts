import type pg from "pg";
import { newId } from "../../lib/ids.ts";
import { runQuery, statementFamily } from "../../db/queryable.ts";
import { clientGrantedSql } from "../auth/index.ts";
import { domainEventSql, domainEventsByIdsSql, partnerEventsByIdsSql } from "../events/index.ts";
import { partnerApiOnSql } from "../platform/index.ts";
import { propertyFieldSql } from "../properties/index.ts";
import { partnerDomainEventTypes } from "./event-types.ts";
import type { SendResult } from "./sender.ts";

/** A delivery after its claim, with its address, property code and event (what an attempt needs). */
export interface Claimed {
  id: string;
  property_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  is_test: boolean;
  attempts: number;
  first_attempt_at: Date;
  lapsed_lease: Date | null;
  created_at: Date;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  ed25519_key_sealed: string | null;
  previous_ed25519_key_sealed: string | null;
  max_per_second: number;
  max_concurrency: number;
  /** The partner client owning the address (a callback address), or null: a hotel address. */
  client_id: string | null;
  property_code: string;
  ev_created_at: Date | null;
  ev_occurred_at: Date | null;
  ev_data: unknown;
}

/** An attempt made, waiting to be recorded. */
export interface Finished {
  c: Claimed;
  result: SendResult;
  finishedAt: Date;
}

const claimedColumns = `c.id, c.property_id, c.endpoint_id, c.event_id, c.event_type, c.is_test, c.attempts, c.first_attempt_at, c.lapsed_lease, c.created_at,
  ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at, ep.ed25519_key_sealed, ep.previous_ed25519_key_sealed,
  ep.max_per_second, ep.max_concurrency, ep.client_id, ${propertyFieldSql("code", "c.property_id")} as property_code,
  e.created_at as ev_created_at, e.occurred_at as ev_occurred_at, e.data as ev_data`;
const claimedJoins = `join webhook_endpoints ep on ep.id = c.endpoint_id
  left join lateral (${domainEventSql("c.event_id", "c.property_id")}) e on true`;

/**
 * Each event with each OPEN address subscribed to its type: a domain event goes to its property's hotel addresses
 * and, for the reservation types, to the callbacks of partner clients granted the property; a partner event to
 * its client's callbacks (those of its property, or client-wide). None while the partner API is off.
 */
export async function subscribedPairs(
  pool: pg.Pool,
  eventIds: readonly string[],
): Promise<{ event_id: string; property_id: string; type: string; endpoint_id: string }[]> {
  const { rows } = await runQuery<{ event_id: string; property_id: string; type: string; endpoint_id: string }>(
    pool,
    named.subscribedPairs(`select e.id as event_id, e.property_id, e.type, ep.id as endpoint_id from (${domainEventsByIdsSql("$1::uuid[]")}) e
     join webhook_endpoints ep on ep.status = 'open' and e.type = any(ep.event_types)
       and (ep.client_id is null and ep.property_id = e.property_id
         or ep.client_id is not null and e.type = any($2::text[]) and (ep.property_id is null or ep.property_id = e.property_id)
           and ${clientGrantedSql("ep.client_id", "e.property_id")})
     where ${partnerApiOnSql}
     union all
     select e.id, e.property_id, e.type, ep.id from (${partnerEventsByIdsSql("$1::uuid[]")}) e
     join webhook_endpoints ep on ep.client_id = e.client_id and ep.status = 'open' and e.type = any(ep.event_types)
       and (ep.property_id is null or ep.property_id = e.property_id) and ${clientGrantedSql("ep.client_id", "e.property_id")}
     where ${partnerApiOnSql}`),
    [eventIds, partnerDomainEventTypes],
  );
  return rows;
}

/** The statements of every delivery, named (planned once per connection; each text is fixed). */
const named = {
  subscribedPairs: statementFamily("webhooks_subscribed_pairs", 1),
  insertClaimed: statementFamily("webhooks_insert_claimed", 1),
};

/**
 * Creates the deliveries of (event, address) pairs with attempt 1 already claimed; the address and the platform
 * switch are checked again here, and a pair delivered before creates nothing (unique index).
 */
export async function insertClaimed(
  pool: pg.Pool,
  pairs: readonly { event_id: string; property_id: string; type: string; endpoint_id: string }[],
  now: Date,
  leaseUntil: Date,
): Promise<Claimed[]> {
  const { rows } = await runQuery<Claimed>(
    pool,
    named.insertClaimed(`with c as (
       insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at, next_attempt_at, lease_until, created_at)
       select u.id, u.property_id, u.endpoint_id, u.event_id, u.event_type, 'pending', 1, $1, $1, $1, $2, $1
       from unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[]) as u(id, property_id, endpoint_id, event_id, event_type)
       join webhook_endpoints ep on ep.id = u.endpoint_id and ep.status = 'open'
       where ${partnerApiOnSql}
       on conflict (endpoint_id, event_id) where resend_of is null and recovery_id is null and not is_test do nothing
       returning *, null::timestamptz as lapsed_lease
     )
     select ${claimedColumns} from c ${claimedJoins}`),
    [
      now,
      leaseUntil,
      pairs.map(() => newId(now.getTime())),
      pairs.map((r) => r.property_id),
      pairs.map((r) => r.endpoint_id),
      pairs.map((r) => r.event_id),
      pairs.map((r) => r.type),
    ],
  );
  return rows;
}

/** Takes the attempts that are due and held by nobody; cancels those whose address or the platform switch is off. */
export async function claim(
  pool: pg.Pool,
  deliveryIds: readonly string[],
  now: Date,
  leaseUntil: Date,
): Promise<Claimed[]> {
  const { rows } = await pool.query<Claimed>(
    `with prev as (
       select dl.id, dl.lease_until from webhook_deliveries dl
       join webhook_endpoints ep on ep.id = dl.endpoint_id and (ep.property_id = dl.property_id or ep.property_id is null)
       where dl.id = any($1::uuid[]) and dl.status = 'pending' and dl.next_attempt_at <= $2 and (dl.lease_until is null or dl.lease_until <= $2)
         and (ep.status = 'open' or dl.is_test) and ${partnerApiOnSql}
       for update of dl skip locked
     ), c as (
       update webhook_deliveries dl set attempts = dl.attempts + 1, lease_until = $3, first_attempt_at = coalesce(dl.first_attempt_at, $2), last_attempt_at = $2
       from prev where dl.id = prev.id
       returning dl.*, prev.lease_until as lapsed_lease
     )
     select ${claimedColumns} from c ${claimedJoins}`,
    [deliveryIds, now, leaseUntil],
  );
  if (rows.length === deliveryIds.length) return rows;
  // Not claimable: stop for good those whose address is no longer open or while webhooks are off platform-wide.
  const claimed = new Set(rows.map((r) => r.id));
  await pool.query(
    `update webhook_deliveries dl set status = 'cancelled', next_attempt_at = null, lease_until = null,
       last_error_class = case when not ps.partner_api_on then 'partner_api_disabled' else 'endpoint_closed' end
     from webhook_endpoints ep, (select ${partnerApiOnSql} as partner_api_on) ps
     where dl.id = any($1::uuid[]) and dl.status = 'pending' and ep.id = dl.endpoint_id
       and (not ps.partner_api_on or (ep.status <> 'open' and not dl.is_test))
       and (dl.lease_until is null or dl.lease_until <= $2)`,
    [deliveryIds.filter((id) => !claimed.has(id)), now],
  );
  return rows;
}

/**
 * Hands claimed attempts back unmade (the address's throttle had no slot soon enough): the attempt is not
 * counted, and a delivery that never got its first attempt has no first-attempt time either (its 24 h window
 * starts when it really goes out).
 */
export async function deferClaimed(pool: pg.Pool, deferred: readonly { c: Claimed; at: Date }[]): Promise<void> {
  await pool.query(
    `update webhook_deliveries dl set attempts = dl.attempts - 1, lease_until = null, next_attempt_at = u.at,
       first_attempt_at = case when dl.attempts = 1 then null else dl.first_attempt_at end
     from unnest($1::uuid[], $2::int[], $3::timestamptz[]) as u(id, attempt, at)
     where dl.id = u.id and dl.attempts = u.attempt and dl.status = 'pending'`,
    [deferred.map((x) => x.c.id), deferred.map((x) => x.c.attempts), deferred.map((x) => x.at.toISOString())],
  );
}

/**
 * Due deliveries grouped by address, at most `perAddress(max_per_second)` of each (about a second's worth), for
 * the addresses not in `skip` (this process still has a second's worth of theirs waiting), oldest first.
 */
export async function dueByAddress(
  pool: pg.Pool,
  now: Date,
  skip: readonly string[],
  limit = 5000,
): Promise<{ endpoint_id: string; id: string; max_per_second: number }[]> {
  const { rows } = await pool.query<{ endpoint_id: string; id: string; max_per_second: number }>(
    `select d.endpoint_id, d.id, ep.max_per_second from (
       select distinct endpoint_id from webhook_deliveries
       where status = 'pending' and next_attempt_at <= $1 and (lease_until is null or lease_until <= $1) and not (endpoint_id = any($2::uuid[]))
     ) e join webhook_endpoints ep on ep.id = e.endpoint_id
     cross join lateral (
       select dl.endpoint_id, dl.id from webhook_deliveries dl
       where dl.endpoint_id = e.endpoint_id and dl.status = 'pending' and dl.next_attempt_at <= $1 and (dl.lease_until is null or dl.lease_until <= $1)
       order by dl.next_attempt_at limit ep.max_per_second
     ) d limit $3`,
    [now, skip, limit],
  );
  return rows;
}

/** The next due time after `now` of a pending delivery (undefined: nothing scheduled). */
export async function nextDueAfter(pool: pg.Pool, now: Date): Promise<Date | undefined> {
  const { rows } = await pool.query<{ at: Date | null }>(
    "select min(next_attempt_at) as at from webhook_deliveries where status = 'pending' and next_attempt_at > $1",
    [now],
  );
  return rows[0]?.at ?? undefined;
}

/** Deliveries that are due now (and not held by a live worker), oldest first. */
export async function dueDeliveryIds(pool: pg.Pool, now: Date, limit = 1000): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    "select id from webhook_deliveries where status = 'pending' and next_attempt_at <= $1 and (lease_until is null or lease_until <= $1) order by next_attempt_at limit $2",
    [now, limit],
  );
  return rows.map((r) => r.id);
}

/** Rows one purge statement deletes: each batch commits on its own, so no statement holds locks for long. */
const purgeBatch = 2_000;

/**
 * Deletes attempt rows and finished deliveries older than `cutoff` (the 30-day history) in batches of `batch`
 * rows, each its own short statement found through an index on the age (webhook_attempts_age,
 * webhook_deliveries_finished_age): a purge of millions of rows never holds locks or a snapshot for long, and a
 * delivery recorded meanwhile waits for one batch at most.
 */
export async function purgeBefore(
  pool: pg.Pool,
  cutoff: Date,
  batch = purgeBatch,
): Promise<{ attempts: number; deliveries: number }> {
  const drain = async (sql: string): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = (await pool.query(sql, [cutoff, batch])).rowCount ?? 0;
      total += n;
      if (n < batch) return total;
    }
  };
  const attempts = await drain(
    "delete from webhook_attempts where id in (select id from webhook_attempts where started_at < $1 limit $2)",
  );
  const deliveries = await drain(
    `delete from webhook_deliveries where id in (select id from webhook_deliveries
      where status <> 'pending' and coalesce(last_attempt_at, created_at) < $1 limit $2)`,
  );
  return { attempts, deliveries };
}
