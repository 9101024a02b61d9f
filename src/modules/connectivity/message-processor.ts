import type pg from "pg";
import { AppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../observability/metrics.ts";
import { poolQueryable, runQuery, type Statement } from "../../db/queryable.ts";
import { pooledTransaction } from "../../db/pooled-transaction.ts";
import { runAs } from "../../lib/change-context.ts";
import {
  findByExternalReference,
  findByProviderReference,
  type AlongsideChange,
  type BookingExtras,
  type ReservationService,
  type RoomLineInput,
} from "../reservations/index.ts";
import type { InboundPartnerMessage, InboundRoomLine } from "./adapters.ts";
import { internalIdsOf } from "./reads.repository.ts";
import { recordOutcomeEvent, type RejectionCode } from "./message-outcome.ts";
import type { Transact, Tx } from "../../db/transaction.ts";

export interface ProcessorDeps {
  pool: pg.Pool;
  transact: Transact;
  reservations: ReservationService;
  clock: Clock;
  logger: Logger;
  /** Outcomes and lag (received to applied) of partner messages. */
  metrics?: Pick<Metrics, "partnerMessageApplied"> | undefined;
}

export type Outcome =
  | { status: "PROCESSED"; reservationId: string; reservationCode: string }
  | { status: "REJECTED"; error: string; code: RejectionCode };

export interface QueuedRow {
  id: string;
  property_id: string;
  provider: string;
  client_id: string;
  payload: InboundPartnerMessage;
  created_at: Date;
}

/**
 * How long a job waits for another worker that holds the same booking's lock before it gives up (PostgreSQL's
 * lock_timeout, 55P03): the job fails and pg-boss retries it (MESSAGE_JOB's retry delay), whoever holds the lock
 * drains the booking meanwhile. Well below the job's expiry, so a wait never outlives the job.
 */
const BOOKING_LOCK_TIMEOUT_MS = 10_000;

/**
 * Applies the queued messages of one (property, external reference) in arrival order, under a lock so two workers
 * never interleave the same booking. Whatever job arrives first drains the key, so job order does not matter.
 *
 * The lock is transaction-scoped (`pg_advisory_xact_lock`) in a transaction of its own that stays open while the
 * key is drained: PostgreSQL releases it at COMMIT, ROLLBACK or when the connection is lost, and the connection
 * that took it is the one that holds it, also behind PgBouncer in transaction pooling (a transaction keeps its
 * server connection; a session lock and its unlock would run on whichever server connection was free, and leak).
 *
 * Each message goes through the reservations core (its own transaction, same availability and validation rules,
 * source CHANNEL, the sales channel as sent, the booking identified by (provider, channel, external reference)).
 * A message that changes the booking writes its outcome (and the partner_message.processed event) in the change's
 * own transaction, sent with its COMMIT: the change and its outcome commit together or not at all. An outcome
 * without a change (a rejection, a NEW that found its booking, a CANCELLED of a cancelled booking) is written in a
 * transaction of its own afterwards; a crash between the two re-runs the message, which changes nothing again.
 * Business failures end as REJECTED with the reason; anything else is thrown so pg-boss retries the job.
 *
 * The lock's statements (BEGIN, the lock timeout, the lock, the key's queued messages) go out together in one round
 * trip: node-postgres pipelines a connection's statements, and each runs after the one before it.
 */
export async function processPartnerMessages(
  deps: ProcessorDeps,
  propertyId: string,
  externalReference: string,
): Promise<void> {
  // The lock's transaction only holds the lock; COMMIT releases it once the key is drained.
  await pooledTransaction(deps.pool, async (_, lock) => {
    const key = [propertyId, externalReference];
    const [, , queued] = await Promise.all([
      lock.query(`set local lock_timeout = ${BOOKING_LOCK_TIMEOUT_MS}`),
      runQuery(lock, bookingLock, key),
      runQuery<QueuedRow>(lock, queuedOfKey, key),
    ]);
    for (const row of queued.rows) {
      // The partner client that sent the message is the author of what it changes (face job, its message id).
      const author = { kind: "partner", id: row.client_id, face: "job", requestId: row.id } as const;
      let written = false;
      const alongside: AlongsideChange = (tx, r) => {
        written = true;
        return writeOutcome(tx, row, { status: "PROCESSED", reservationId: r.id, reservationCode: r.code }, deps.clock);
      };
      const applied = await runAs(author, () => apply(deps, row, alongside)).catch((err: unknown): Applied => {
        if (err instanceof AppError && err.code !== "internal" && err.code !== "unavailable")
          return { outcome: { status: "REJECTED", error: err.message, code: err.code }, changed: false };
        throw err;
      });
      const { outcome } = applied;
      // An outcome without a change: in a transaction of its own, so it commits at once (the lock's transaction only
      // holds the lock), with the partner_message.* event that tells the partner's callbacks (message-outcome.ts).
      if (!(applied.changed && written)) await deps.transact((tx) => writeOutcome(tx, row, outcome, deps.clock));
      deps.logger.info({ eventId: row.id, status: outcome.status }, "reservation event applied");
      deps.metrics?.partnerMessageApplied(outcome.status, row.created_at, deps.clock.now());
    }
  });
}

const bookingLock: Statement = {
  name: "connectivity_booking_lock",
  text: "select pg_advisory_xact_lock(hashtext('reservation-events'), hashtext($1 || ':' || $2))",
};

const queuedOfKey: Statement = {
  name: "connectivity_queued_of_key",
  text: "select id, property_id, provider, client_id, payload, created_at from partner_messages where property_id = $1 and external_reference = $2 and status = 'QUEUED' order by seq",
};

const outcomeUpdate: Statement = {
  name: "connectivity_message_outcome",
  text: "update partner_messages set status = $2, reservation_id = $3, reservation_code = $4, error = $5, processed_at = $6, attempts = attempts + 1 where id = $1",
};

/** A message's outcome and its partner_message.* event, in `tx` (the change's own, or one of their own). */
async function writeOutcome(tx: Tx, row: QueuedRow, outcome: Outcome, clock: Clock): Promise<void> {
  const at = clock.now();
  await Promise.all([
    tx.query(
      outcomeUpdate,
      outcome.status === "PROCESSED"
        ? [row.id, outcome.status, outcome.reservationId, outcome.reservationCode, null, at]
        : [row.id, outcome.status, null, null, outcome.error, at],
    ),
    recordOutcomeEvent(tx, row.client_id, row, outcome, at),
  ]);
}

/** A message's outcome, and whether a change of the booking was committed with it (`alongside` ran in it). */
interface Applied {
  outcome: Outcome;
  changed: boolean;
}

/**
 * Applies one message. The room type and rate plan codes are translated (one statement) while the booking is looked
 * up: the two go out side by side.
 */
async function apply(deps: ProcessorDeps, row: QueuedRow, alongside: AlongsideChange): Promise<Applied> {
  const unchanged = (outcome: Outcome): Applied => ({ outcome, changed: false });
  const changed = (r: { id: string; code: string }): Applied => ({
    outcome: { status: "PROCESSED", reservationId: r.id, reservationCode: r.code },
    changed: true,
  });
  const e = row.payload;
  // The channel already sold it: its amounts stand (an override recorded against the channel, with the difference to
  // our rates) and broken restrictions are recorded, not refused.
  const actor = {
    propertyId: row.property_id,
    canOverridePrice: true,
    by: `channel:${row.provider}`,
    channelSale: true,
  };
  const channel = e.channel === "" ? null : e.channel;
  const q = poolQueryable(deps.pool);
  const findBooking = async () => {
    let foundId = await findByExternalReference(q, row.property_id, row.provider, channel, e.externalReference);
    // A change or cancellation sent without its channel finds the provider's one booking with that reference.
    if (foundId === undefined && channel === null && e.eventType !== "NEW") {
      const ids = await findByProviderReference(q, row.property_id, row.provider, e.externalReference);
      if (ids.length === 1) foundId = ids[0];
    }
    return foundId === undefined ? undefined : await deps.reservations.get(actor, foundId);
  };
  const [found, ids] = await Promise.all([
    findBooking(),
    e.eventType === "CANCELLED"
      ? new Map<string, string>()
      : internalIdsOf(q, row.property_id, row.provider, {
          roomTypes: e.rooms.map((room) => room.roomTypeCode),
          ratePlans: e.rooms.map((room) => room.ratePlanCode),
        }),
  ]);
  const unknown = `No reservation with external reference ${e.externalReference}${channel === null ? "" : ` from channel ${channel}`}.`;
  if (e.eventType === "CANCELLED") {
    if (found === undefined) return unchanged({ status: "REJECTED", error: unknown, code: "unknown_reservation" });
    if (found.status === "CANCELLED")
      return unchanged({ status: "PROCESSED", reservationId: found.id, reservationCode: found.code });
    return changed(await deps.reservations.cancel(actor, found.id, alongside));
  }
  const rooms: RoomLineInput[] = [];
  for (const [i, room] of e.rooms.entries()) {
    const roomTypeId = ids.get(`room_type:${room.roomTypeCode}`);
    if (roomTypeId === undefined)
      return unchanged({
        status: "REJECTED",
        code: "unmapped_code",
        error: `rooms[${i}].roomTypeCode ${room.roomTypeCode} is not mapped for provider ${row.provider}.`,
      });
    const ratePlanId = ids.get(`rate_plan:${room.ratePlanCode}`);
    if (ratePlanId === undefined)
      return unchanged({
        status: "REJECTED",
        code: "unmapped_code",
        error: `rooms[${i}].ratePlanCode ${room.ratePlanCode} is not mapped for provider ${row.provider}.`,
      });
    rooms.push({
      roomTypeId,
      ratePlanId,
      adults: room.adults,
      children: room.children,
      amountMinor: BigInt(room.amountMinor),
      ...bookingLineOf(room),
    });
  }
  if (e.eventType === "NEW" || found === undefined) {
    if (e.eventType === "MODIFIED")
      return unchanged({ status: "REJECTED", error: unknown, code: "unknown_reservation" });
    // A NEW for a known reference returns the first reservation (created: false): never a second booking.
    const { reservation, created } = await deps.reservations.create(
      actor,
      {
        source: "CHANNEL",
        provider: row.provider,
        channel,
        externalReference: e.externalReference,
        holderName: e.holderName,
        arrivalDate: e.arrivalDate,
        departureDate: e.departureDate,
        rooms,
        status: "GUARANTEED",
        notes: e.notes,
        totalMinor: BigInt(e.totalMinor),
        currency: e.currency,
        priceOverride: true,
        ...bookingExtrasOf(e),
      },
      alongside,
    );
    return created
      ? changed(reservation)
      : unchanged({ status: "PROCESSED", reservationId: reservation.id, reservationCode: reservation.code });
  }
  const current = found;
  if (current.rooms.length !== rooms.length) {
    return unchanged({
      status: "REJECTED",
      code: "rooms_changed",
      error: "A modification cannot add or remove rooms; cancel and send a NEW reservation.",
    });
  }
  const updated = await deps.reservations.update(
    actor,
    found.id,
    {
      arrivalDate: e.arrivalDate,
      departureDate: e.departureDate,
      ...(e.holderName !== "" ? { holderName: e.holderName } : {}),
      notes: e.notes,
      ...bookingExtrasOf(e),
      // The channel's amounts stand on every revision, as on NEW (the difference to our rates is recorded).
      rooms: current.rooms.map((line, i) => ({
        nightlyMinor: rooms[i]!.nightlyMinor,
        guestNames: rooms[i]!.guestNames,
        reservationRoomId: line.id,
        roomTypeId: rooms[i]!.roomTypeId,
        ratePlanId: rooms[i]!.ratePlanId,
        adults: rooms[i]!.adults,
        children: rooms[i]!.children ?? 0,
        amountMinor: rooms[i]!.amountMinor,
      })),
    },
    alongside,
  );
  return changed(updated);
}

/** A room's nightly prices and guests as the reservations core takes them (absent when the event has none). */
function bookingLineOf(room: InboundRoomLine): Pick<RoomLineInput, "nightlyMinor" | "guestNames"> {
  return {
    ...(room.nightlyPrices !== undefined && room.nightlyPrices.length > 0
      ? { nightlyMinor: room.nightlyPrices.map((n) => BigInt(n.amountMinor)) }
      : {}),
    ...(room.guests !== undefined && room.guests.length > 0 ? { guestNames: room.guests } : {}),
  };
}

/** Remarks and payment guarantee: a MODIFIED that sends them replaces them; older queued messages carry neither. */
function bookingExtrasOf(e: InboundPartnerMessage): BookingExtras {
  return {
    ...(e.remarks !== undefined && e.remarks.length > 0 ? { remarks: e.remarks } : {}),
    ...(e.paymentGuarantee !== undefined && e.paymentGuarantee !== null
      ? { paymentGuarantee: e.paymentGuarantee }
      : {}),
  };
}
