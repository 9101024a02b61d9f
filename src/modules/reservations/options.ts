import type { Transact, Tx } from "../../db/transaction.ts";
import { invalidField } from "../../errors.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";

/** How far ahead an option may run. */
const maxOptionDays = 365;

/** An option's end as asked: only on a TENTATIVE reservation, in the future and at most a year ahead (else 422). */
export function checkOptionUntil(until: Date, status: string, now: Date): Date {
  if (status !== "TENTATIVE")
    throw invalidField("optionUntil", "an option is held only by a TENTATIVE reservation", "validation_failed");
  if (Number.isNaN(until.getTime()) || until.getTime() <= now.getTime())
    throw invalidField("optionUntil", "must be in the future", "validation_failed");
  if (until.getTime() - now.getTime() > maxOptionDays * 86_400_000)
    throw invalidField("optionUntil", `at most ${maxOptionDays} days ahead`, "validation_failed");
  return until;
}

/**
 * Sets (or with null clears) a reservation's option in the caller's transaction; a new end enqueues its expiry job
 * in the same transaction, due then. A job of an earlier end finds the option moved and leaves it alone.
 */
export async function setOption(tx: Tx, propertyId: string, reservationId: string, until: Date | null): Promise<void> {
  await tx.query("update reservations set option_until = $3 where property_id = $1 and id = $2", [
    propertyId,
    reservationId,
    until,
  ]);
  if (until !== null)
    await tx.enqueue(queues.reservationOptionExpiry, { propertyId, reservationId }, { startAfter: until });
}

/** Cancels a reservation inside a transaction with the system's reason (the reservation service's cancel). */
export type CancelInTx = (tx: Tx, propertyId: string, reservationId: string, reason: "option_expired") => Promise<void>;

/**
 * What a reservations.option-expiry job runs: a TENTATIVE reservation whose option has passed is cancelled with the
 * reason option_expired (rooms back, reservation.cancelled sent). Confirmed, cancelled or extended: nothing. A job
 * run before the option's end (another clock) enqueues itself again for then.
 */
export async function expireOption(
  deps: { transact: Transact; clock: Clock; cancelInTx: CancelInTx },
  propertyId: string,
  reservationId: string,
): Promise<"expired" | "kept"> {
  return deps.transact(async (tx) => {
    const r: Reservation | undefined = await repo.findReservation(tx, propertyId, reservationId, true);
    if (r === undefined || r.status !== "TENTATIVE" || r.optionUntil === null) return "kept";
    if (r.optionUntil.getTime() > deps.clock.now().getTime()) {
      await tx.enqueue(queues.reservationOptionExpiry, { propertyId, reservationId }, { startAfter: r.optionUntil });
      return "kept";
    }
    await deps.cancelInTx(tx, propertyId, reservationId, "option_expired");
    return "expired";
  });
}
