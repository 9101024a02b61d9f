import type { Tx } from "../../db/transaction.ts";
import type { Keyed } from "../../db/held-transaction.ts";
import { AppError } from "../../errors.ts";
import { recordEvents, type NewEvent } from "../events/index.ts";
import { requireId } from "../../lib/ids.ts";
import { ariChangesSql, type AriReason } from "../inventory/index.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";
import { recordChange } from "../audit/index.ts";

/** Who acts: the property (resolved from the caller's reach, never from input) and the caller's rights. */
export interface Actor {
  propertyId: string;
  /** Holds `reservations.override_price`: may ask for a price override (`priceOverride`). */
  canOverridePrice: boolean;
  /** Who acts, recorded on a price override: `user:<id>`, `client:<id>` or `channel:<provider>`. */
  by?: string | undefined;
  /**
   * A channel already sold this booking (the connectivity worker): its amounts stand on every revision (the
   * difference to our rates is recorded) and restrictions it breaks are recorded for staff, not enforced.
   */
  channelSale?: boolean;
  /**
   * Holds `reservations.overbook`: may ask a create to be accepted beyond the room type's rooms (`overbook`).
   * A channel sale is accepted so without asking (the channel already sold it).
   */
  canOverbook?: boolean;
  /**
   * The handle of a keyed call (an Idempotency-Key), from the RPC handler (`keyedOf`): the change's transaction is
   * opened with it, `transact(work, actor.keyed)`, so the change commits with the call's stored outcome.
   */
  keyed?: Keyed | undefined;
}

/** Loads a reservation of the acting property (404 for anything else), locked for a write when `lock`. */
export async function requireReservation(tx: Tx, propertyId: string, id: string, lock: boolean): Promise<Reservation> {
  const r = await repo.findReservation(tx, propertyId, requireId(id, "Reservation"), lock);
  if (r === undefined) throw new AppError("not_found", "Reservation not found.");
  return r;
}

/**
 * Event rows for a finished change, then in one last statement the ARI feed entries of its availability hints and
 * the change sequence (both counters are held until commit: see bumpChangeSeq and ariChangesSql). That statement
 * goes out with the COMMIT (Tx.queryLast) unless `last: false` says the caller's transaction goes on; the event
 * rows and their jobs go out just before it, in the same round trip.
 */
export async function finishChange(
  tx: Tx,
  r: Reservation,
  events: readonly NewEvent[],
  opts: { last: boolean } = { last: true },
): Promise<Reservation> {
  const recorded = recordEvents(tx, events);
  const hints = events
    .filter((e) => e.type === "availability.changed")
    .map((e) => e.data as { from: string; to: string; roomTypes: string[]; reason: AriReason });
  const ari = ariChangesSql(
    r.propertyId,
    hints.map((h) => ({ reason: h.reason, from: h.from, to: h.to, roomTypes: h.roomTypes, ratePlans: [] })),
    events[0]?.occurredAt ?? r.updatedAt,
    3,
  );
  // The event rows, their jobs and the last statement leave together (queryLast waits until the jobs' INSERT is sent).
  const [, changeSeq] = await Promise.all([recorded, repo.bumpChangeSeq(tx, r.propertyId, r.id, ari, opts.last)]);
  return { ...r, changeSeq };
}

/**
 * The audit trail of one reservation change, in its transaction: the reservation's own fields (action `action`),
 * and a room_line row (same action) for every room line that was added, removed or changed.
 */
export function auditReservation(tx: Tx, action: string, before: Reservation | undefined, after: Reservation): void {
  const { rooms: linesBefore = [], ...b } = before ?? {};
  const { rooms: linesAfter, ...a } = after;
  recordChange(tx, {
    propertyId: after.propertyId,
    entity: "reservation",
    entityId: after.id,
    action,
    before: before && b,
    after: a,
  });
  for (const line of linesAfter) {
    const old = linesBefore.find((l) => l.id === line.id);
    if (before !== undefined && old !== undefined && JSON.stringify(old, big) === JSON.stringify(line, big)) continue;
    recordChange(tx, {
      propertyId: after.propertyId,
      entity: "room_line",
      entityId: line.id,
      action,
      before: old,
      after: line,
    });
  }
}

const big = (_k: string, v: unknown): unknown => (typeof v === "bigint" ? v.toString() : v);
