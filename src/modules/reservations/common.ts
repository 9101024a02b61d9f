import type { Tx } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import { recordEvents, type NewEvent } from "../events/index.ts";
import { requireId } from "../../lib/ids.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";

/** Who acts: the property (resolved from the caller's reach, never from input) and the caller's rights. */
export interface Actor {
  propertyId: string;
  /** Holds `reservations.override_price`: may ask for a price override (`priceOverride`). */
  canOverridePrice: boolean;
  /** Who acts, recorded on a price override: `user:<id>`, `client:<id>` or `channel:<provider>`. */
  by?: string | undefined;
}

/** Loads a reservation of the acting property (404 for anything else), locked for a write when `lock`. */
export async function requireReservation(tx: Tx, propertyId: string, id: string, lock: boolean): Promise<Reservation> {
  const r = await repo.findReservation(tx, propertyId, requireId(id, "Reservation"), lock);
  if (r === undefined) throw new AppError("not_found", "Reservation not found.");
  return r;
}

/** Event rows for a finished change, then the change sequence (last, see bumpChangeSeq). */
export async function finishChange(tx: Tx, r: Reservation, events: readonly NewEvent[]): Promise<Reservation> {
  await recordEvents(tx, events);
  return { ...r, changeSeq: await repo.bumpChangeSeq(tx, r.propertyId, r.id) };
}

