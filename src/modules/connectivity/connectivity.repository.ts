import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import type { Principal } from "../auth/index.ts";
import { findActivePropertiesByIds, type Property } from "../properties/index.ts";
import type { InboundPartnerMessage } from "./adapters.ts";

/** What a partner sees of a property in its reach. */
export type PropertyInReach = Pick<Property, "id" | "code" | "name" | "sandbox">;

export async function propertiesInReach(pool: pg.Pool, principal: Principal): Promise<PropertyInReach[]> {
  const properties = await findActivePropertiesByIds(poolQueryable(pool), principal.propertyIds);
  return properties.map(({ id, code, name, sandbox }) => ({ id, code, name, sandbox }));
}

export interface StoredPartnerMessage {
  id: string;
  status: "QUEUED" | "PROCESSED" | "REJECTED";
  reservationId: string | null;
  reservationCode: string | null;
  error: string | null;
}

/** A queued event row: partner_messages columns in the order of messageRow(). */
export const messageColumns = {
  id: "uuid",
  property_id: "uuid",
  client_id: "text",
  provider: "text",
  event_type: "text",
  external_reference: "text",
  payload: "jsonb",
  created_at: "timestamptz",
} as const;

export function messageRow(e: {
  id: string;
  propertyId: string;
  clientId: string;
  provider: string;
  event: InboundPartnerMessage;
  now: Date;
}): unknown[] {
  return [
    e.id,
    e.propertyId,
    e.clientId,
    e.provider,
    e.event.eventType,
    e.event.externalReference,
    JSON.stringify(e.event),
    e.now,
  ];
}

/** One event of this client at this property (another client's or property's event is 404). */
export async function findPartnerMessage(
  pool: pg.Pool,
  propertyId: string,
  clientId: string,
  eventId: string,
): Promise<StoredPartnerMessage | undefined> {
  const { rows } = await pool.query<{
    id: string;
    status: StoredPartnerMessage["status"];
    reservation_id: string | null;
    reservation_code: string | null;
    error: string | null;
  }>(
    "select id, status, reservation_id, reservation_code, error from partner_messages where id = $1 and property_id = $2 and client_id = $3",
    [eventId, propertyId, clientId],
  );
  const r = rows[0];
  return (
    r && {
      id: r.id,
      status: r.status,
      reservationId: r.reservation_id,
      reservationCode: r.reservation_code,
      error: r.error,
    }
  );
}
