import type pg from "pg";
import type { Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import { newId } from "../../lib/ids.ts";
import type { CatalogueType, EventDataOf } from "./catalogue.ts";
import { eventChannel } from "./stream.repository.ts";

/** Event types of the spec's event table that the event log carries (webhook.test is sent, never logged). */
export const eventTypes = [
  "reservation.created",
  "reservation.updated",
  "reservation.cancelled",
  "guest.checked_in",
  "guest.checked_out",
  "folio.payment_posted",
  "invoice.issued",
  "availability.changed",
] as const satisfies readonly CatalogueType[];
export type EventType = (typeof eventTypes)[number];

/** The payload types, derived from the event catalogue's schemas (the OpenAPI `webhooks` section shows the same). */
export type ReservationEventData = EventDataOf<"reservation.created">;
export type RoomLineEventData = EventDataOf<"guest.checked_in">;
export type AvailabilityEventData = EventDataOf<"availability.changed">;
export type PaymentEventData = EventDataOf<"folio.payment_posted">;
export type InvoiceEventData = EventDataOf<"invoice.issued">;

export interface NewEvent {
  propertyId: string;
  type: EventType;
  occurredAt: Date;
  data: object;
}

interface EventFanoutJob {
  eventId: string;
}

/**
 * Appends events to the log and enqueues their fan-out jobs, all on the caller's transaction: an event exists
 * if and only if the change it describes committed. Two statements however many events (the rows, then the
 * jobs), sent in one round trip. Returns the event ids (the webhook envelope ids) in the given order.
 */
export async function recordEvents(tx: Tx, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map((e) => newId(e.occurredAt.getTime()));
  // created_at is when the row is written (clock_timestamp(), not the transaction start that now() gives) and
  // never before occurred_at, so the envelope's createdAt >= occurredAt even when the change took a while.
  const rows = tx.query(
    {
      name: "events_insert_domain_events",
      text: `insert into domain_events (id, property_id, type, occurred_at, data, created_at)
     select u.*, greatest(clock_timestamp(), u.occurred_at) from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[]) as u(id, property_id, type, occurred_at, data)`,
    },
    [
      ids,
      events.map((e) => e.propertyId),
      events.map((e) => e.type),
      events.map((e) => e.occurredAt),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
  // The event stream's listeners hear of the property at commit (nothing if it rolls back). The job insert below
  // already makes the transaction notify (its queue has notify on), so this adds no commit serialization.
  const notified = tx.query("select pg_notify($1, p) from unnest($2::text[]) p", [
    eventChannel,
    [...new Set(events.map((e) => e.propertyId))],
  ]);
  // The statements leave together (the pool pipelines them): one round trip. A failed insert fails the
  // statements behind it (the transaction is aborted), and the caller's transaction rolls back.
  await Promise.all([
    rows,
    notified,
    tx.enqueueMany(
      queues.eventsFanout,
      ids.map((eventId): EventFanoutJob => ({ eventId })),
    ),
  ]);
  return ids;
}

/** One event: see recordEvents. Returns the event id. */
export async function recordEvent(tx: Tx, event: NewEvent): Promise<string> {
  const [id] = await recordEvents(tx, [event]);
  return id!;
}

/** Events meant for one partner client only, sent to its callback addresses (never to the hotel's). */
export const partnerEventTypes = ["partner_message.processed", "partner_message.rejected", "ari.updated"] as const;
type PartnerEventType = (typeof partnerEventTypes)[number];

export interface NewPartnerEvent {
  clientId: string;
  propertyId: string;
  type: PartnerEventType;
  occurredAt: Date;
  data: object;
}

/**
 * Appends partner events and enqueues their fan-out jobs on the caller's transaction (as recordEvents: the event
 * exists if and only if what it tells committed). Returns the event ids in the given order.
 */
export async function recordPartnerEvents(tx: Tx, events: readonly NewPartnerEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map((e) => newId(e.occurredAt.getTime()));
  const rows = tx.query(
    {
      name: "events_insert_partner_events",
      text: `insert into partner_events (id, client_id, property_id, type, occurred_at, data, created_at)
     select u.*, greatest(clock_timestamp(), u.occurred_at)
       from unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[]) as u(id, client_id, property_id, type, occurred_at, data)`,
    },
    [
      ids,
      events.map((e) => e.clientId),
      events.map((e) => e.propertyId),
      events.map((e) => e.type),
      events.map((e) => e.occurredAt),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
  await Promise.all([
    rows,
    tx.enqueueMany(
      queues.eventsFanout,
      ids.map((eventId): EventFanoutJob => ({ eventId })),
    ),
  ]);
  return ids;
}

/** How long partner events are kept: the 30 days of delivery history plus the 24 hours of retries before it. */
export const partnerEventRetentionDays = 31;

/**
 * Deletes partner events created before `cutoff`, `batch` rows a statement, each its own short statement found
 * through the age index (partner_events_age): every partner message's outcome and every ARI push leaves one, and
 * once their delivery history is gone they are read by nothing (the pull feeds are the partner's record).
 */
export async function purgePartnerEventsBefore(pool: pg.Pool, cutoff: Date, batch = 2_000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      "delete from partner_events where id in (select id from partner_events where created_at < $1 limit $2)",
      [cutoff, batch],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}
