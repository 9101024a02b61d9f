import type pg from "pg";

type EndpointStatus = "open" | "closed" | "disabled";

export interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  description: string;
  status: EndpointStatus;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedReason: string | null;
  previousSecretExpiresAt: Date | null;
  /** `whpk_...` when the address chose ed25519 signatures, else null. */
  publicKey: string | null;
  /** The public key before the last rotation, verifying too until previousSecretExpiresAt. */
  previousPublicKey: string | null;
  maxPerSecond: number;
  maxConcurrency: number;
  lastSuccessAt: Date | null;
  failuresSinceSuccess: number;
}

export interface HistoryEntry {
  id: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  httpStatus: number | null;
  durationMs: number;
  errorClass: string | null;
  errorMessage: string | null;
  startedAt: Date;
  finishedAt: Date;
  deliveryStatus: string;
  /** The recovery that made this delivery, if one did. */
  recoveryId: string | null;
}

export interface EndpointRow {
  id: string;
  url: string;
  event_types: string[];
  description: string;
  status: EndpointStatus;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
  closed_reason: string | null;
  previous_secret_expires_at: Date | null;
  ed25519_public_key: string | null;
  previous_ed25519_public_key: string | null;
  max_per_second: number;
  max_concurrency: number;
  last_success_at: Date | null;
  failures_since_success: number;
}

export const endpointColumns =
  "id, url, event_types, description, status, created_by, created_at, updated_at, closed_at, closed_reason, previous_secret_expires_at, ed25519_public_key, previous_ed25519_public_key, max_per_second, max_concurrency, last_success_at, failures_since_success";

export function toEndpoint(r: EndpointRow): Endpoint {
  return {
    id: r.id,
    url: r.url,
    eventTypes: r.event_types,
    description: r.description,
    status: r.status,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    closedAt: r.closed_at,
    closedReason: r.closed_reason,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    publicKey: r.ed25519_public_key,
    previousPublicKey: r.previous_secret_expires_at === null ? null : r.previous_ed25519_public_key,
    maxPerSecond: r.max_per_second,
    maxConcurrency: r.max_concurrency,
    lastSuccessAt: r.last_success_at,
    failuresSinceSuccess: r.failures_since_success,
  };
}

/** Reads of addresses and their history; every query is scoped by the property id. */
export function createEndpointsRepository(pool: pg.Pool) {
  return {
    async list(propertyId: string): Promise<Endpoint[]> {
      const { rows } = await pool.query<EndpointRow>(
        `select ${endpointColumns} from webhook_endpoints where property_id = $1 and client_id is null order by created_at, id`,
        [propertyId],
      );
      return rows.map(toEndpoint);
    },
    async get(propertyId: string, id: string): Promise<Endpoint | undefined> {
      const { rows } = await pool.query<EndpointRow>(
        `select ${endpointColumns} from webhook_endpoints where property_id = $1 and id = $2 and client_id is null`,
        [propertyId, id],
      );
      return rows[0] === undefined ? undefined : toEndpoint(rows[0]);
    },
    /** Attempts since `since`, newest first, keyset-paged by (started_at, id); optionally of one delivery status and event type. */
    async history(
      propertyId: string,
      endpointId: string,
      since: Date,
      limit: number,
      after: { startedAt: Date; id: string } | undefined,
      filter: { deliveryStatus?: string | undefined; eventType?: string | undefined } = {},
    ): Promise<HistoryEntry[]> {
      const { rows } = await pool.query<{
        id: string;
        delivery_id: string;
        event_id: string;
        event_type: string;
        attempt: number;
        http_status: number | null;
        duration_ms: number;
        error_class: string | null;
        error_message: string | null;
        started_at: Date;
        finished_at: Date;
        delivery_status: string;
        recovery_id: string | null;
      }>(
        `select a.id, a.delivery_id, a.event_id, a.event_type, a.attempt, a.http_status, a.duration_ms, a.error_class, a.error_message, a.started_at, a.finished_at,
                dl.status as delivery_status, dl.recovery_id
         from webhook_attempts a join webhook_deliveries dl on dl.id = a.delivery_id
         where a.property_id = $1 and a.endpoint_id = $2 and a.started_at >= $3
           and ($5::timestamptz is null or (a.started_at, a.id) < ($5::timestamptz, $6::uuid))
           and ($7::text is null or dl.status = $7) and ($8::text is null or a.event_type = $8)
         order by a.started_at desc, a.id desc limit $4`,
        [
          propertyId,
          endpointId,
          since,
          limit,
          after?.startedAt ?? null,
          after?.id ?? null,
          filter.deliveryStatus ?? null,
          filter.eventType ?? null,
        ],
      );
      return rows.map((r) => ({
        id: r.id,
        deliveryId: r.delivery_id,
        eventId: r.event_id,
        eventType: r.event_type,
        attempt: r.attempt,
        httpStatus: r.http_status,
        durationMs: r.duration_ms,
        errorClass: r.error_class,
        errorMessage: r.error_message,
        startedAt: r.started_at,
        finishedAt: r.finished_at,
        deliveryStatus: r.delivery_status,
        recoveryId: r.recovery_id,
      }));
    },
  };
}
