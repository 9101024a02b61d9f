import type { Queryable } from "../../db/queryable.ts";
import { roomsSql } from "../inventory/index.ts";

/**
 * Read-only questions other modules ask about reservations and their room lines (the folio, the night audit).
 * Every query filters by property id; state changes go through the ReservationService.
 */

/** A reservation's id and code (the folio copies the code when it opens), or undefined. */
export async function findReservationRef(
  q: Queryable,
  propertyId: string,
  reservationId: string,
): Promise<{ id: string; code: string } | undefined> {
  const [r] = await q.query<{ id: string; code: string }>(
    `select id, code from reservations where property_id = $1 and id = $2`,
    [propertyId, reservationId],
  );
  return r;
}

/**
 * Arrivals of the day (or earlier) still waiting: TENTATIVE or GUARANTEED, hence no room line checked in (checking a
 * line in moves the reservation to IN_HOUSE in the same transaction, and IN_HOUSE never goes back). Read through the
 * partial index `reservations_to_arrive` alone: a test of the room lines made the planner hash every checked-in
 * line of the hotel's history.
 */
export async function unarrivedReservations(q: Queryable, propertyId: string, businessDate: string): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `select r.id from reservations r
      where r.property_id = $1 and r.arrival_date <= $2::date and r.status in ('TENTATIVE', 'GUARANTEED')
      order by r.arrival_date, r.code`,
    [propertyId, businessDate],
  );
  return rows.map((r) => r.id);
}

/** Room lines checked in and not out whose departure is on or before the business date. */
export async function countDeparturesNotCheckedOut(
  q: Queryable,
  propertyId: string,
  businessDate: string,
): Promise<number> {
  const [r] = await q.query<{ n: number }>(
    `select count(*)::int as n from reservation_rooms l join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
      where l.property_id = $1 and r.departure_date <= $2::date and l.checked_in_at is not null and l.checked_out_at is null
        and r.status = 'IN_HOUSE'`,
    [propertyId, businessDate],
  );
  return r?.n ?? 0;
}

export interface InHouseNight {
  reservationId: string;
  reservationCode: string;
  reservationRoomId: string;
  roomNumber: string | null;
  /** The nightly price of the business date; null when the line has no price for it. */
  amountMinor: bigint | null;
}

/** Checked-in room lines staying the night of the business date, with that night's price. */
export async function inHouseNights(q: Queryable, propertyId: string, businessDate: string): Promise<InHouseNight[]> {
  const rows = await q.query<{
    reservation_id: string;
    code: string;
    id: string;
    number: string | null;
    amount: string | null;
  }>(
    `select l.reservation_id, r.code, l.id, m.number, (l.nightly_minor[($2::date - r.arrival_date) + 1])::text as amount
       from reservation_rooms l
       join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
       left join (${roomsSql("$1")}) m on m.id = l.room_id
      where l.property_id = $1 and r.status = 'IN_HOUSE' and l.checked_in_at is not null and l.checked_out_at is null
        and r.arrival_date <= $2::date and r.departure_date > $2::date
      order by r.code, l.position`,
    [propertyId, businessDate],
  );
  return rows.map((r) => ({
    reservationId: r.reservation_id,
    reservationCode: r.code,
    reservationRoomId: r.id,
    roomNumber: r.number,
    amountMinor: r.amount === null ? null : BigInt(r.amount),
  }));
}

/**
 * The code of a reservation holding the room on a night of [from, to): its room line assigned to the room and not
 * checked out, the reservation still holding inventory. Undefined when none does (what an out-of-order period asks).
 */
export async function stayInRoom(
  q: Queryable,
  propertyId: string,
  roomId: string,
  from: string,
  to: string,
): Promise<string | undefined> {
  const [row] = await q.query<{ code: string }>(
    `select r.code from reservation_rooms rr join reservations r on r.property_id = rr.property_id and r.id = rr.reservation_id
      where rr.property_id = $1 and rr.room_id = $2 and rr.checked_out_at is null
        and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE') and r.arrival_date < $4 and r.departure_date > $3
      order by r.arrival_date, r.code limit 1`,
    [propertyId, roomId, from, to],
  );
  return row?.code;
}

export interface RoomNight extends InHouseNight {
  /** The night (YYYY-MM-DD). */
  date: string;
  status: string;
}

/** Given room nights (room line and date) with their reservation's status and the night's price (null when none). */
export async function roomNightsOf(
  q: Queryable,
  propertyId: string,
  nights: readonly { reservationRoomId: string; date: string }[],
): Promise<RoomNight[]> {
  if (nights.length === 0) return [];
  const rows = await q.query<{
    reservation_id: string;
    code: string;
    id: string;
    number: string | null;
    date: string;
    status: string;
    amount: string | null;
  }>(
    `select l.reservation_id, r.code, l.id, m.number, n.d::text as date, r.status,
            (l.nightly_minor[(n.d - r.arrival_date) + 1])::text as amount
       from unnest($2::uuid[], $3::date[]) as n(id, d)
       join reservation_rooms l on l.property_id = $1 and l.id = n.id
       join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
       left join (${roomsSql("$1")}) m on m.id = l.room_id
      order by n.d, r.code, l.position`,
    [propertyId, nights.map((n) => n.reservationRoomId), nights.map((n) => n.date)],
  );
  return rows.map((r) => ({
    reservationId: r.reservation_id,
    reservationCode: r.code,
    reservationRoomId: r.id,
    roomNumber: r.number,
    date: r.date,
    status: r.status,
    amountMinor: r.amount === null ? null : BigInt(r.amount),
  }));
}

/** A room line as the guests module links occupants to it. */
export interface RoomLineRef {
  reservationId: string;
  reservationRoomId: string;
  status: string;
  /** adults + children: how many guests the line holds. */
  occupants: number;
}

/**
 * The room line `lineId` of reservation `reservationId` (null: any reservation) in the property, its reservation
 * row locked (FOR NO KEY UPDATE: two links to one line serialise, so the occupancy check holds); undefined when
 * there is none.
 */
export async function findRoomLineRef(
  q: Queryable,
  propertyId: string,
  reservationId: string | null,
  lineId: string,
): Promise<RoomLineRef | undefined> {
  const [r] = await q.query<RoomLineRef>(
    `select r.id as "reservationId", l.id as "reservationRoomId", r.status, (l.adults + l.children)::int as occupants
       from reservation_rooms l join reservations r on r.property_id = l.property_id and r.id = l.reservation_id
      where l.property_id = $1 and l.id = $2 and ($3::uuid is null or l.reservation_id = $3)
        for no key update of r`,
    [propertyId, lineId, reservationId],
  );
  return r;
}
