import type { Queryable } from "../../db/queryable.ts";
import { roomsSql } from "../inventory/index.ts";
import { propertyFieldSql } from "../properties/index.ts";
import { roomLineStaysSql, type StayMovement } from "../reservations/index.ts";

/** What a guest report row carries besides its sealed notification (guest_reports, migration 0048). */
export interface GuestReportRow {
  id: string;
  propertyId: string;
  groupId: string;
  reservationId: string;
  reservationRoomId: string;
  guestId: string | null;
  movement: "check_in" | "check_out";
  businessDate: string;
  status: "pending" | "sent" | "failed" | "incomplete";
  missing: string[];
  sealed: string;
  keyId: string;
  attempts: number;
  lastError: string | null;
  reference: string | null;
  sentAt: Date | null;
  createdAt: Date;
  keepUntil: string;
}

const columns = `r.id, r.property_id as "propertyId", r.group_id as "groupId", r.reservation_id as "reservationId",
  r.reservation_room_id as "reservationRoomId", r.guest_id as "guestId", r.movement,
  to_char(r.business_date, 'YYYY-MM-DD') as "businessDate", r.status, r.missing, r.sealed, r.key_id as "keyId",
  r.attempts, r.last_error as "lastError", r.reference, r.sent_at as "sentAt", r.created_at as "createdAt",
  to_char(r.keep_until, 'YYYY-MM-DD') as "keepUntil"`;

/** Inserts the rows in one statement. */
export async function insertReports(db: Queryable, rows: readonly GuestReportRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof GuestReportRow>(k: K) => rows.map((r) => r[k]);
  await db.query(
    `insert into guest_reports (id, property_id, group_id, reservation_id, reservation_room_id, guest_id, movement,
       business_date, status, missing, sealed, key_id, created_at, keep_until)
     select u.id, u.property_id, u.group_id, u.reservation_id, u.reservation_room_id, u.guest_id, u.movement,
            u.business_date, u.status, string_to_array(u.missing, ','), u.sealed, u.key_id, u.created_at, u.keep_until
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::date[],
                   $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::date[])
         as u(id, property_id, group_id, reservation_id, reservation_room_id, guest_id, movement, business_date,
              status, missing, sealed, key_id, created_at, keep_until)`,
    [
      col("id"),
      col("propertyId"),
      col("groupId"),
      col("reservationId"),
      col("reservationRoomId"),
      col("guestId"),
      col("movement"),
      col("businessDate"),
      col("status"),
      rows.map((r) => r.missing.join(",")),
      col("sealed"),
      col("keyId"),
      col("createdAt"),
      col("keepUntil"),
    ],
  );
}

export async function findReport(db: Queryable, id: string): Promise<GuestReportRow | undefined> {
  const [row] = await db.query<GuestReportRow>(`select ${columns} from guest_reports r where r.id = $1`, [id]);
  return row;
}

/**
 * The property's report `id`, locked, and whether a newer report of its occupant, line and movement exists (the
 * lock on the first makes two resends of it take turns).
 */
export async function findReportForResend(
  db: Queryable,
  propertyId: string,
  id: string,
): Promise<(GuestReportRow & { superseded: boolean }) | undefined> {
  const [row] = await db.query<GuestReportRow & { superseded: boolean }>(
    `select ${columns},
            exists (select 1 from guest_reports n where n.reservation_room_id = r.reservation_room_id
                      and n.guest_id is not distinct from r.guest_id and n.movement = r.movement
                      and (n.created_at, n.id) > (r.created_at, r.id)) as superseded
       from guest_reports r where r.property_id = $1 and r.id = $2 for update`,
    [propertyId, id],
  );
  return row;
}

/** Records an attempt's outcome on a pending report; false when it was not pending any more. */
export async function recordAttempt(
  db: Queryable,
  id: string,
  outcome: { status: "sent"; reference: string; at: Date } | { status: "pending" | "failed"; error: string },
): Promise<boolean> {
  const rows =
    outcome.status === "sent"
      ? await db.query(
          `update guest_reports set status = 'sent', attempts = attempts + 1, reference = $2, sent_at = $3, last_error = null
            where id = $1 and status = 'pending' returning id`,
          [id, outcome.reference, outcome.at],
        )
      : await db.query(
          `update guest_reports set status = $2, attempts = attempts + 1, last_error = $3
            where id = $1 and status = 'pending' returning id`,
          [id, outcome.status, outcome.error],
        );
  return rows.length === 1;
}

/** A report as ListGuestReports answers it: the row without its sealed part, with the stay and the guest's name. */
export interface ListedReport extends Omit<GuestReportRow, "sealed" | "keyId" | "groupId" | "propertyId"> {
  reservationCode: string;
  roomNumber: string | null;
  guestName: string;
}

const listedSql = `select ${columns}, s.code as "reservationCode", rm.number as "roomNumber",
       coalesce(g.given_name || ' ' || g.family_name, '') as "guestName"
  from guest_reports r
  join (${roomLineStaysSql}) s on s.line_id = r.reservation_room_id
  left join lateral (${roomsSql("r.property_id")}) rm on rm.id = s.room_id
  left join guests g on g.id = r.guest_id`;

/** A page of the property's reports, newest first, after the cursor, optionally of one status; `limit` rows. */
export async function listReports(
  db: Queryable,
  propertyId: string,
  status: string | undefined,
  after: { at: Date; id: string } | undefined,
  limit: number,
): Promise<ListedReport[]> {
  return db.query<ListedReport>(
    `${listedSql}
      where r.property_id = $1 and ($2::text is null or r.status = $2)
        and ($3::timestamptz is null or (r.created_at, r.id) < ($3, $4::uuid))
      order by r.created_at desc, r.id desc
      limit $5`,
    [propertyId, status ?? null, after?.at ?? null, after?.id ?? null, limit],
  );
}

/** The property's report `id` as ListGuestReports answers it. */
export async function findListedReport(db: Queryable, propertyId: string, id: string): Promise<ListedReport> {
  const [row] = await db.query<ListedReport>(`${listedSql} where r.property_id = $1 and r.id = $2`, [propertyId, id]);
  if (row === undefined) throw new Error(`guest report ${id} not found`);
  return row;
}

/** An in-house occupant (or a line without one) whose check-in is not reported to the authority. */
export interface UnreportedGuest {
  reservationId: string;
  reservationCode: string;
  reservationRoomId: string;
  roomNumber: string | null;
  guestId: string | null;
  guestName: string;
  /** no_guests, not_queued, incomplete, pending or failed. */
  reason: string;
}

/** The property's in-house lines whose occupants' check-in is not reported (the newest report per occupant counts). */
export async function unreportedInHouse(db: Queryable, propertyId: string): Promise<UnreportedGuest[]> {
  return db.query<UnreportedGuest>(
    `select s.reservation_id as "reservationId", s.code as "reservationCode", s.line_id as "reservationRoomId",
            rm.number as "roomNumber", gs.guest_id as "guestId",
            coalesce(g.given_name || ' ' || g.family_name, '') as "guestName",
            case when gs.guest_id is null then 'no_guests' else coalesce(last.status, 'not_queued') end as reason
       from (${roomLineStaysSql}) s
       left join lateral (${roomsSql("s.property_id")}) rm on rm.id = s.room_id
       left join guest_stays gs on gs.reservation_room_id = s.line_id
       left join guests g on g.id = gs.guest_id
       left join lateral (select gr.status from guest_reports gr
                           where gr.reservation_room_id = s.line_id and gr.movement = 'check_in'
                             and gr.guest_id = gs.guest_id
                           order by gr.created_at desc, gr.id desc limit 1) last on true
      where s.property_id = $1 and s.checked_in_at is not null and s.checked_out_at is null
        and (gs.guest_id is null or last.status is null or last.status <> 'sent')
      order by s.code, rm.number, gs.linked_at`,
    [propertyId],
  );
}

/**
 * How many of the property's reports failed (retries exhausted, or refused by the authority) and were not followed
 * by a later report of the same occupant, line and movement (the guest put on the line again, or a retry).
 */
export async function countFailedReports(db: Queryable, propertyId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from guest_reports r where r.property_id = $1 and r.status = 'failed'
        and not exists (select 1 from guest_reports n where n.reservation_room_id = r.reservation_room_id
                          and n.guest_id is not distinct from r.guest_id and n.movement = r.movement
                          and n.created_at > r.created_at)`,
    [propertyId],
  );
  return row?.n ?? 0;
}

/** Deletes up to `batch` reports kept past their period; returns how many. */
export async function deleteReportsPast(db: Queryable, today: string, batch: number): Promise<number> {
  const rows = await db.query(
    `delete from guest_reports where id in (select id from guest_reports where keep_until < $1::date limit $2) returning id`,
    [today, batch],
  );
  return rows.length;
}

/** The line as a check-in movement when it is checked in and not out (a guest put on it then is reported at once). */
export async function inHouseLine(
  db: Queryable,
  reservationRoomId: string,
): Promise<Omit<StayMovement, "movement" | "at"> | undefined> {
  const [row] = await db.query<Omit<StayMovement, "movement" | "at">>(
    `select s.property_id as "propertyId", s.reservation_id as "reservationId", s.code as "reservationCode",
            s.line_id as "reservationRoomId", coalesce(rm.number, '') as "roomNumber", s.arrival_date as "arrivalDate",
            s.departure_date as "departureDate",
            to_char(${propertyFieldSql("businessDate", "s.property_id")}, 'YYYY-MM-DD') as "businessDate"
       from (${roomLineStaysSql}) s
       left join lateral (${roomsSql("s.property_id")}) rm on rm.id = s.room_id
      where s.line_id = $1 and s.checked_in_at is not null and s.checked_out_at is null`,
    [reservationRoomId],
  );
  return row;
}
