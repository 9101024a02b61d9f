import type { Tx } from "../../db/transaction.ts";
import { unbalancedFolioReservationIds } from "../folio/index.ts";
import { countRoomsStatusWrittenBefore } from "../inventory/index.ts";
import { advanceBusinessDate, findPropertyById, findPropertyRow } from "../properties/index.ts";
import { countInStatus } from "../reservations/index.ts";

/**
 * What the night audit reads and moves, asked of the owning modules (reservations, folio, inventory,
 * properties): this module owns no table. State changes go through the owners, never here.
 */
export { countDeparturesNotCheckedOut, inHouseNights, unarrivedReservations } from "../reservations/index.ts";
export type { InHouseNight } from "../reservations/index.ts";
export { advanceBusinessDate };

/** Folios of checked-out reservations whose balance is not zero. */
export async function countUnbalancedDepartedFolios(tx: Tx, propertyId: string): Promise<number> {
  return countInStatus(tx, propertyId, await unbalancedFolioReservationIds(tx, propertyId), "CHECKED_OUT");
}

/**
 * Rooms whose housekeeping status nobody set during the business day: the status was last written before
 * the business date began in the property's time zone (out-of-order rooms are excluded).
 */
export async function countRoomsWithoutHousekeepingStatus(
  tx: Tx,
  propertyId: string,
  businessDate: string,
): Promise<number> {
  const property = await findPropertyById(tx, propertyId);
  if (property === undefined) return 0;
  return countRoomsStatusWrittenBefore(tx, propertyId, businessDate, property.timeZone);
}

/**
 * Locks the property row (serializes night audits of one property) and reads its business date. NO KEY
 * UPDATE, not UPDATE: it still excludes a second audit, but lets other transactions insert rows that
 * reference the property (their foreign-key KEY SHARE lock) instead of queueing behind the audit or
 * deadlocking with it.
 */
export async function lockBusinessDate(
  tx: Tx,
  propertyId: string,
): Promise<{ businessDate: string; currency: string; amountScale: number } | undefined> {
  const p = await findPropertyRow(tx, propertyId, true);
  return p === undefined
    ? undefined
    : { businessDate: p.businessDate, currency: p.currency, amountScale: p.amountScale };
}

export async function readBusinessDate(tx: Tx, propertyId: string): Promise<string | undefined> {
  return (await findPropertyRow(tx, propertyId))?.businessDate;
}
