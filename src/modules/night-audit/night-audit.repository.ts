import type { Tx } from "../../db/transaction.ts";
import { unbalancedFolioReservationIds } from "../folio/index.ts";
import { countInStatus } from "../reservations/index.ts";

/**
 * Read-only queries of the night audit over the day's reservations, room lines, rooms and folios. Every query
 * filters by property id. State changes go through the owning services (folio, reservations), never here.
 */

/** Arrivals of the day (or earlier) still waiting: TENTATIVE or GUARANTEED with no room line checked in. */
export async function unarrivedReservations(tx: Tx, propertyId: string, businessDate: string): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    `select r.id from reservations r
      where r.property_id = $1 and r.arrival_date <= $2::date and r.status in ('TENTATIVE', 'GUARANTEED')
        and not exists (select 1 from reservation_rooms l where l.property_id = r.property_id and l.reservation_id = r.id and l.checked_in_at is not null)
      order by r.arrival_date, r.code`,
    [propertyId, businessDate],
  );
  return rows.map((r) => r.id);
}

/** Room lines checked in and not out whose departure is on or before the business date. */
export async function countDeparturesNotCheckedOut(tx: Tx, propertyId: string, businessDate: string): Promise<number> {
  const [r] = await tx.query<{ n: number }>(
    `select count(*)::int as n from reservation_rooms l join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
      where l.property_id = $1 and r.departure_date <= $2::date and l.checked_in_at is not null and l.checked_out_at is null
        and r.status = 'IN_HOUSE'`,
    [propertyId, businessDate],
  );
  return r?.n ?? 0;
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
  const [r] = await tx.query<{ n: number }>(
    `select count(*)::int as n from rooms m join properties p on p.id = m.property_id
      where m.property_id = $1 and m.status <> 'OUT_OF_ORDER' and m.updated_at < ($2::date::timestamp at time zone p.time_zone)`,
    [propertyId, businessDate],
  );
  return r?.n ?? 0;
}

export interface InHouseNight {
  reservationId: string;
  reservationRoomId: string;
  roomNumber: string | null;
  /** The nightly price of the business date; null when the line has no price for it. */
  amountMinor: bigint | null;
}

/** Checked-in room lines staying the night of the business date, with that night's price. */
export async function inHouseNights(tx: Tx, propertyId: string, businessDate: string): Promise<InHouseNight[]> {
  const rows = await tx.query<{ reservation_id: string; id: string; number: string | null; amount: string | null }>(
    `select l.reservation_id, l.id, m.number, (l.nightly_minor[($2::date - r.arrival_date) + 1])::text as amount
       from reservation_rooms l
       join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
       left join rooms m on m.property_id = l.property_id and m.id = l.room_id
      where l.property_id = $1 and r.status = 'IN_HOUSE' and l.checked_in_at is not null and l.checked_out_at is null
        and r.arrival_date <= $2::date and r.departure_date > $2::date
      order by r.code, l.position`,
    [propertyId, businessDate],
  );
  return rows.map((r) => ({
    reservationId: r.reservation_id,
    reservationRoomId: r.id,
    roomNumber: r.number,
    amountMinor: r.amount === null ? null : BigInt(r.amount),
  }));
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
  const [r] = await tx.query<{ business_date: string; currency: string; amount_scale: number }>(
    `select business_date::text as business_date, currency, amount_scale from properties where id = $1 for no key update`,
    [propertyId],
  );
  return r === undefined
    ? undefined
    : { businessDate: r.business_date, currency: r.currency, amountScale: r.amount_scale };
}

export async function readBusinessDate(tx: Tx, propertyId: string): Promise<string | undefined> {
  const [r] = await tx.query<{ business_date: string }>(
    `select business_date::text as business_date from properties where id = $1`,
    [propertyId],
  );
  return r?.business_date;
}

/** Moves the business date one day on; returns the new date. */
export async function advanceBusinessDate(tx: Tx, propertyId: string, now: Date): Promise<string> {
  const [r] = await tx.query<{ business_date: string }>(
    `update properties set business_date = business_date + 1, updated_at = $2 where id = $1 returning business_date::text as business_date`,
    [propertyId, now],
  );
  return r!.business_date;
}
