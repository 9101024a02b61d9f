/**
 * SQL fragments over this module's tables for other modules' statements (see the inventory module's sql.ts for
 * the convention: `own_` aliases, keyed by expressions of the caller's statement).
 */

/**
 * A row source of every room night the property's stays hold, one row per room line and night:
 * `holder_id` (the reservation), `holder_created_at`, `room_type_id`, `date`. A stay holds [arrival, departure)
 * while tentative, guaranteed, in house or checked out (an early check-out moved its departure to the business
 * date); a cancelled stay that had begun holds the nights before `nights_kept_until`; a no-show or a stay cancelled
 * before arrival holds none. A room line moved to another type held its former type on the nights before the move.
 * This is what `room_type_days.sold` must count (inventory:verify).
 */
export function heldNightsSql(propertyIdExpr: string): string {
  return `select own_r.id as holder_id, own_r.created_at as holder_created_at,
         coalesce((select own_m.from_room_type_id from reservation_room_moves own_m
                    where own_m.property_id = own_rr.property_id and own_m.room_line_id = own_rr.id and own_m.moved_on > own_n.date
                    order by own_m.moved_on, own_m.created_at limit 1), own_rr.room_type_id) as room_type_id,
         own_n.date
    from reservations own_r
    join reservation_rooms own_rr on own_rr.property_id = own_r.property_id and own_rr.reservation_id = own_r.id
   cross join lateral (select g::date as date from generate_series(own_r.arrival_date,
           (case when own_r.status = 'CANCELLED' then own_r.nights_kept_until else own_r.departure_date end) - 1, interval '1 day') g) own_n
   where own_r.property_id = ${propertyIdExpr}
     and (own_r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE', 'CHECKED_OUT') or (own_r.status = 'CANCELLED' and own_r.nights_kept_until is not null))`;
}

/**
 * A row source of room lines as stays, keyed by the line: `line_id`, `reservation_id`, `property_id`, `code`,
 * `status`, `arrival_date`, `departure_date` (YYYY-MM-DD text), `room_id`, `checked_in_at`, `checked_out_at`. Join
 * it on `line_id` (the primary key of the lines: one indexed lookup per row of the caller's).
 */
export const roomLineStaysSql = `select own_rr.id as line_id, own_r.id as reservation_id, own_r.property_id, own_r.code,
       own_r.status, to_char(own_r.arrival_date, 'YYYY-MM-DD') as arrival_date,
       to_char(own_r.departure_date, 'YYYY-MM-DD') as departure_date, own_rr.room_id, own_rr.checked_in_at,
       own_rr.checked_out_at
  from reservation_rooms own_rr
  join reservations own_r on own_r.property_id = own_rr.property_id and own_r.id = own_rr.reservation_id`;
