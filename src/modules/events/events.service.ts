import type { Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import { newId } from "../../lib/ids.ts";

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
] as const;
export type EventType = (typeof eventTypes)[number];

/** The spec's "Reservation data" (same fields as the connectivity reservation list). No personal data. */
export interface ReservationEventData {
  id: string;
  code: string;
  status: string;
  source: string;
  externalReference: string | null;
  channel: string | null;
  arrivalDate: string;
  departureDate: string;
  adults: number;
  children: number;
  roomTypes: string[];
  cancelledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The spec's "Room-line data" (guest.checked_in, guest.checked_out). No guest name. */
export interface RoomLineEventData {
  reservationId: string;
  reservationCode: string;
  externalReference: string | null;
  reservationRoomId: string;
  roomNumber: string;
  roomTypeCode: string;
  arrivalDate: string;
  departureDate: string;
  adults: number;
  children: number;
  checkedInAt: string;
  checkedOutAt: string | null;
}

/** The spec's "Availability hint data": a hint only, the current numbers come from the availability read. */
export interface AvailabilityEventData {
  from: string;
  to: string;
  toExclusive: true;
  roomTypes: string[];
  /** Why (see AriReason in the inventory module): reservation, room_block, out_of_order, inventory, rate, restriction. */
  reason: "reservation" | "room_block" | "out_of_order" | "inventory" | "rate" | "restriction";
}

export interface NewEvent {
  propertyId: string;
  type: EventType;
  occurredAt: Date;
  data: object;
}

export interface EventFanoutJob {
  eventId: string;
}

/**
 * Appends events to the log and enqueues their fan-out jobs, all on the caller's transaction: an event exists
 * if and only if the change it describes committed. Two statements however many events (the rows, then the
 * jobs). Returns the event ids (the webhook envelope ids) in the given order.
 */
export async function recordEvents(tx: Tx, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map((e) => newId(e.occurredAt.getTime()));
  await tx.query(
    `insert into events (id, property_id, type, occurred_at, data)
     select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[])`,
    [ids, events.map((e) => e.propertyId), events.map((e) => e.type), events.map((e) => e.occurredAt), events.map((e) => JSON.stringify(e.data))],
  );
  await tx.enqueueMany(queues.eventsFanout, ids.map((eventId): EventFanoutJob => ({ eventId })));
  return ids;
}

/** One event: see recordEvents. Returns the event id. */
export async function recordEvent(tx: Tx, event: NewEvent): Promise<string> {
  const [id] = await recordEvents(tx, [event]);
  return id!;
}
