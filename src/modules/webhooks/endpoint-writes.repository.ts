import type pg from "pg";
import type { Queryable } from "../../db/queryable.ts";
import { endpointColumns, type EndpointRow } from "./endpoints.repository.ts";

/**
 * What staff change on their property's webhook addresses (a partner's callback addresses have a client id and are
 * never matched here) and the deliveries those changes start or stop. Every statement is scoped by the property id.
 */

/** The SET clauses of the changes to an address; $1 and $2 are the property and the address, the rest follows. */
export const endpointChanges = {
  /** $3 url, $4 event types, $5 description, $6 now, $7 max per second, $8 max concurrency */
  settings: "url = $3, event_types = $4, description = $5, updated_at = $6, max_per_second = $7, max_concurrency = $8",
  /** $3 sealed ed25519 key (null: off), $4 its public key */
  ed25519:
    "ed25519_key_sealed = $3, ed25519_public_key = $4, previous_ed25519_key_sealed = null, previous_ed25519_public_key = null",
  /** $3 sealed new secret, $4 when the old one stops signing, $5 now, $6 sealed new ed25519 key, $7 its public key */
  rotateSecret: `previous_secret_sealed = secret_sealed, previous_secret_expires_at = $4, secret_sealed = $3, updated_at = $5,
         previous_ed25519_key_sealed = ed25519_key_sealed, previous_ed25519_public_key = ed25519_public_key,
         ed25519_key_sealed = coalesce($6, ed25519_key_sealed), ed25519_public_key = coalesce($7, ed25519_public_key)`,
  /** $3 now */
  enable:
    "status = 'open', closed_at = null, closed_reason = null, failing_since = null, failures_since_success = 0, updated_at = $3",
} as const;

/** The changed address, or undefined when the property has no such address. */
export async function updateEndpoint(
  q: Queryable,
  propertyId: string,
  id: string,
  change: keyof typeof endpointChanges,
  params: readonly unknown[],
): Promise<EndpointRow | undefined> {
  const rows = await q.query<EndpointRow>(
    `update webhook_endpoints set ${endpointChanges[change]} where property_id = $1 and id = $2 and client_id is null returning ${endpointColumns}`,
    [propertyId, id, ...params],
  );
  return rows[0];
}

/** Serializes creates of one property, so two concurrent requests cannot pass the cap together. */
export async function lockEndpointCreation(q: Queryable, propertyId: string): Promise<void> {
  await q.query("select pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext($1))", [propertyId]);
}

export async function countEndpoints(q: Queryable, propertyId: string): Promise<number> {
  const [count] = await q.query<{ n: number }>(
    "select count(*)::int as n from webhook_endpoints where property_id = $1 and client_id is null",
    [propertyId],
  );
  return count?.n ?? 0;
}

export async function insertEndpoint(
  q: Queryable,
  e: {
    id: string;
    propertyId: string;
    url: string;
    description: string;
    eventTypes: readonly string[];
    secretSealed: string;
    createdBy: string;
    now: Date;
    ed25519KeySealed: string | null;
    ed25519PublicKey: string | null;
    maxPerSecond: number;
    maxConcurrency: number;
  },
): Promise<EndpointRow> {
  const [inserted] = await q.query<EndpointRow>(
    `insert into webhook_endpoints (id, property_id, url, description, event_types, status, secret_sealed, created_by, created_at, updated_at,
       ed25519_key_sealed, ed25519_public_key, max_per_second, max_concurrency)
     values ($1, $2, $3, $4, $5, 'open', $6, $7, $8, $8, $9, $10, $11, $12) returning ${endpointColumns}`,
    [
      e.id,
      e.propertyId,
      e.url,
      e.description,
      e.eventTypes,
      e.secretSealed,
      e.createdBy,
      e.now,
      e.ed25519KeySealed,
      e.ed25519PublicKey,
      e.maxPerSecond,
      e.maxConcurrency,
    ],
  );
  return inserted!;
}

/** Deletes the address (its deliveries and history go with it); undefined when the property has no such address. */
export async function deleteEndpoint(q: Queryable, propertyId: string, id: string): Promise<EndpointRow | undefined> {
  const [gone] = await q.query<EndpointRow>(
    `delete from webhook_endpoints where property_id = $1 and id = $2 and client_id is null returning ${endpointColumns}`,
    [propertyId, id],
  );
  return gone;
}

export async function disableEndpoint(
  q: Queryable,
  propertyId: string,
  id: string | null,
  now: Date,
): Promise<EndpointRow | undefined> {
  const [row] = await q.query<EndpointRow>(
    `update webhook_endpoints set status = 'disabled', updated_at = $3 where property_id = $1 and id = $2 and client_id is null returning ${endpointColumns}`,
    [propertyId, id, now],
  );
  return row;
}

/** Stops the address's pending deliveries (nothing accumulates while it is off). */
export async function cancelPendingDeliveries(q: Queryable, endpointId: string): Promise<void> {
  await q.query(
    "update webhook_deliveries set status = 'cancelled', next_attempt_at = null, last_error_class = 'endpoint_closed' where endpoint_id = $1 and status = 'pending'",
    [endpointId],
  );
}

/** A webhook.test delivery, due now. */
export async function insertTestDelivery(
  pool: pg.Pool,
  d: { id: string; propertyId: string; endpointId: string; eventId: string; eventType: string; now: Date },
): Promise<void> {
  await pool.query(
    `insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, is_test, status, next_attempt_at, created_at)
     values ($1, $2, $3, $4, $5, true, 'pending', $6, $6)`,
    [d.id, d.propertyId, d.endpointId, d.eventId, d.eventType, d.now],
  );
}

/** A copy of a delivery (same event), due now; false when the address has no such delivery. */
export async function copyDelivery(
  q: Queryable,
  d: { id: string; propertyId: string; endpointId: string; deliveryId: string | null; now: Date },
): Promise<boolean> {
  const [created] = await q.query<{ id: string }>(
    `insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, is_test, resend_of, status, next_attempt_at, created_at)
     select $1, property_id, endpoint_id, event_id, event_type, is_test, id, 'pending', $5, $5 from webhook_deliveries
     where property_id = $2 and endpoint_id = $3 and id = $4 returning id`,
    [d.id, d.propertyId, d.endpointId, d.deliveryId, d.now],
  );
  return created !== undefined;
}
