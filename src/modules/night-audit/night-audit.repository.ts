import type { Tx } from "../../db/transaction.ts";
import { folioBalancesOfReservations, roomChargeProblem, unbalancedFolioReservationIds } from "../folio/index.ts";
import { countRoomsStatusWrittenBefore } from "../inventory/index.ts";
import { advanceBusinessDate, findPropertyById, findPropertyRow } from "../properties/index.ts";
import { countInStatus } from "../reservations/index.ts";

/**
 * What the night audit reads and moves, asked of the owning modules (reservations, folio, inventory,
 * properties): this module owns no table. State changes go through the owners, never here.
 */
export {
  countDeparturesNotCheckedOut,
  inHouseNights,
  roomNightsOf,
  unarrivedReservations,
} from "../reservations/index.ts";
export { advanceBusinessDate, folioBalancesOfReservations, roomChargeProblem };

/** Room nights an earlier audit could not charge (this module's table): tried again by every audit. */
export async function pendingUnchargedNights(
  tx: Tx,
  propertyId: string,
): Promise<{ reservationRoomId: string; date: string }[]> {
  const rows = await tx.query<{ reservation_room_id: string; date: string }>(
    `select reservation_room_id, business_date::text as date from night_audit_uncharged_nights
      where property_id = $1 order by business_date, reservation_code`,
    [propertyId],
  );
  return rows.map((r) => ({ reservationRoomId: r.reservation_room_id, date: r.date }));
}

export async function recordUnchargedNight(
  tx: Tx,
  propertyId: string,
  n: {
    reservationId: string;
    reservationCode: string;
    reservationRoomId: string;
    businessDate: string;
    reason: string;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into night_audit_uncharged_nights (property_id, reservation_room_id, reservation_id, reservation_code, business_date, reason, recorded_at)
     values ($1, $2, $3, $4, $5::date, $6, $7)
     on conflict (property_id, reservation_room_id, business_date) do update set reason = excluded.reason, recorded_at = excluded.recorded_at`,
    [propertyId, n.reservationRoomId, n.reservationId, n.reservationCode, n.businessDate, n.reason, now],
  );
}

export async function clearUnchargedNight(
  tx: Tx,
  propertyId: string,
  reservationRoomId: string,
  date: string,
): Promise<void> {
  await tx.query(
    `delete from night_audit_uncharged_nights where property_id = $1 and reservation_room_id = $2 and business_date = $3::date`,
    [propertyId, reservationRoomId, date],
  );
}

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
