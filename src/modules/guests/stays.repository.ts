import type { Queryable } from "../../db/queryable.ts";
import { roomsSql } from "../inventory/index.ts";
import { propertyFieldSql } from "../properties/index.ts";
import { roomLineStaysSql } from "../reservations/index.ts";

/** A guest on a room line (guest_stays). */
export interface StayLink {
  guestId: string;
  reservationRoomId: string;
  propertyId: string;
  reservationId: string;
  groupId: string;
  linkedAt: Date;
}

/** Links the guest to the line; false when the guest was on it already. */
export async function insertStay(db: Queryable, s: StayLink): Promise<boolean> {
  const rows = await db.query(
    `insert into guest_stays (guest_id, reservation_room_id, property_id, reservation_id, group_id, linked_at)
     values ($1, $2, $3, $4, $5, $6) on conflict do nothing returning guest_id`,
    [s.guestId, s.reservationRoomId, s.propertyId, s.reservationId, s.groupId, s.linkedAt],
  );
  return rows.length === 1;
}

/** Unlinks the guest from the line; false when the guest was not on it. */
export async function deleteStay(db: Queryable, reservationRoomId: string, guestId: string): Promise<boolean> {
  const rows = await db.query(
    `delete from guest_stays where reservation_room_id = $1 and guest_id = $2 returning guest_id`,
    [reservationRoomId, guestId],
  );
  return rows.length === 1;
}

/** The guest ids on each of the lines, in the order they were linked. */
export async function guestIdsOfLines(
  db: Queryable,
  reservationRoomIds: readonly string[],
): Promise<{ reservationRoomId: string; guestId: string }[]> {
  if (reservationRoomIds.length === 0) return [];
  return db.query(
    `select reservation_room_id as "reservationRoomId", guest_id as "guestId" from guest_stays
      where reservation_room_id = any($1::uuid[]) order by linked_at, guest_id`,
    [reservationRoomIds],
  );
}

export interface StayRow {
  reservationId: string;
  reservationRoomId: string;
  propertyCode: string;
  reservationCode: string;
  status: string;
  arrivalDate: string;
  departureDate: string;
  roomNumber: string | null;
  checkedInAt: Date | null;
  checkedOutAt: Date | null;
  linkedAt: Date;
}

/** A page of the guest's stays, the latest link first, after the cursor's (linked_at, line id); `limit` rows. */
export async function staysOfGuest(
  db: Queryable,
  groupId: string,
  guestId: string,
  after: { at: Date; id: string } | undefined,
  limit: number,
): Promise<StayRow[]> {
  return db.query<StayRow>(
    `select s.reservation_id as "reservationId", gs.reservation_room_id as "reservationRoomId",
            ${propertyFieldSql("code", "gs.property_id")} as "propertyCode", s.code as "reservationCode", s.status,
            s.arrival_date as "arrivalDate", s.departure_date as "departureDate", rm.number as "roomNumber",
            s.checked_in_at as "checkedInAt", s.checked_out_at as "checkedOutAt", gs.linked_at as "linkedAt"
       from guest_stays gs
       join (${roomLineStaysSql}) s on s.line_id = gs.reservation_room_id
       left join lateral (${roomsSql("gs.property_id")}) rm on rm.id = s.room_id
      where gs.guest_id = $1 and gs.group_id = $2
        and ($3::timestamptz is null or (gs.linked_at, gs.reservation_room_id) < ($3, $4::uuid))
      order by gs.linked_at desc, gs.reservation_room_id desc
      limit $5`,
    [guestId, groupId, after?.at ?? null, after?.id ?? null, limit],
  );
}

/**
 * Moves the stays of `fromIds` to `toId` (a line holding the kept guest, or two of the duplicates, keeps one link)
 * and returns how many moved.
 */
export async function moveStays(db: Queryable, fromIds: readonly string[], toId: string): Promise<number> {
  await db.query(
    `delete from guest_stays d where d.guest_id = any($1::uuid[])
        and (exists (select 1 from guest_stays k where k.reservation_room_id = d.reservation_room_id and k.guest_id = $2)
          or exists (select 1 from guest_stays o where o.reservation_room_id = d.reservation_room_id
                        and o.guest_id = any($1::uuid[]) and o.guest_id < d.guest_id))`,
    [fromIds, toId],
  );
  const moved = await db.query(
    `update guest_stays set guest_id = $2 where guest_id = any($1::uuid[]) returning reservation_room_id`,
    [fromIds, toId],
  );
  return moved.length;
}
