import type { Queryable } from "../../db/queryable.ts";
import { roomsSql } from "../inventory/index.ts";
import { propertyFieldSql } from "../properties/index.ts";

/**
 * The reservation reports of the report catalogue and the reservation parts of the dashboard and forecast
 * statements. A report takes the property id, the first and last day (both included) and a row limit, and
 * returns its columns plus `total` (the row count before the limit); dates are `YYYY-MM-DD`, money is minor
 * units as text.
 */
export type ReportQuery = (
  q: Queryable,
  propertyId: string,
  start: string,
  end: string,
  limit: number,
) => Promise<(Record<string, unknown> & { total: string })[]>;

const report =
  (sql: string): ReportQuery =>
  (q, propertyId, start, end, limit) =>
    q.query(sql, [propertyId, start, end, limit]);
const day = (expr: string): string => `to_char(${expr}, 'YYYY-MM-DD')`;
const roomCount = `(select count(*) from reservation_rooms rr where rr.property_id = r.property_id and rr.reservation_id = r.id)::int`;

/** Reservations arriving between start and end (every status but CANCELLED). */
export const arrivalsReport = report(`
  select ${day("r.arrival_date")} as "arrivalDate", r.code, r.holder_name as "holderName", r.status, ${roomCount} as rooms, r.adults, r.children,
      ${day("r.departure_date")} as "departureDate", r.total_minor::text as "totalMinor", count(*) over () as total
    from reservations r
    where r.property_id = $1 and r.arrival_date between $2::date and $3::date and r.status <> 'CANCELLED'
    order by r.arrival_date, r.code limit $4`);

/**
 * Reservations departing between start and end that stay or stayed. A stay is at most 60 nights: a range on
 * departure (or on the nights stayed) also bounds arrival_date, so the arrival index reads the range, never the
 * property's whole history.
 */
export const departuresReport = report(`
  select ${day("r.departure_date")} as "departureDate", r.code, r.holder_name as "holderName", r.status, ${roomCount} as rooms,
      ${day("r.arrival_date")} as "arrivalDate", r.total_minor::text as "totalMinor", count(*) over () as total
    from reservations r
    where r.property_id = $1 and r.departure_date between $2::date and $3::date and r.arrival_date between $2::date - 60 and $3::date
      and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE', 'CHECKED_OUT')
    order by r.departure_date, r.code limit $4`);

/** Checked-in stays with at least one night between start and end, with their room numbers. */
export const inHouseReport = report(`
  select r.code, r.holder_name as "holderName",
      coalesce((select string_agg(rm.number, ', ' order by rm.number) from reservation_rooms rr
                  join (${roomsSql("r.property_id")}) rm on rm.id = rr.room_id
                 where rr.property_id = r.property_id and rr.reservation_id = r.id), '') as "roomNumbers",
      ${day("r.arrival_date")} as "arrivalDate", ${day("r.departure_date")} as "departureDate", r.status, r.adults, r.children, count(*) over () as total
    from reservations r
    where r.property_id = $1 and r.status in ('IN_HOUSE', 'CHECKED_OUT') and r.arrival_date between $2::date - 60 and $3::date and r.departure_date > $2::date
    order by r.arrival_date, r.code limit $4`);

const timeZone = propertyFieldSql("timeZone", "$1");
const cancelledDay = `(r.cancelled_at at time zone ${timeZone})::date`;

/**
 * Reservations cancelled between start and end (the day in the property's time zone). The page is taken first and
 * formatted after: when the planner sorts the range instead of reading it in index order (as it does on a large
 * history), formatting every row of the range before the sort cost 1.5x the small database's time.
 */
export const cancellationsReport = report(`
  select ${day(cancelledDay)} as "cancelledDate", r.code, r.holder_name as "holderName", r.source,
      coalesce(r.channel, '') as channel, ${day("r.arrival_date")} as "arrivalDate", ${day("r.departure_date")} as "departureDate",
      r.total_minor::text as "totalMinor", r.total
    from (select r.*, count(*) over () as total from reservations r
           where r.property_id = $1 and r.status = 'CANCELLED'
             and r.cancelled_at >= ($2::date::timestamp at time zone ${timeZone}) and r.cancelled_at < (($3::date + 1)::timestamp at time zone ${timeZone})
           order by r.cancelled_at, r.code limit $4) r
   order by r.cancelled_at, r.code`);

/** Columns `arrivals`, `departures` and `inHouse` of the day `dayExpr`, for the dashboard's one statement. */
export function dayMovementsSql(propertyIdExpr: string, dayExpr: string): string {
  return `(select count(*) from reservations own_r where own_r.property_id = ${propertyIdExpr} and own_r.arrival_date = ${dayExpr}
      and own_r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE'))::int as arrivals,
  (select count(*) from reservations own_r where own_r.property_id = ${propertyIdExpr} and own_r.departure_date = ${dayExpr}
      and own_r.status in ('IN_HOUSE', 'CHECKED_OUT'))::int as departures,
  (select count(*) from reservations own_r where own_r.property_id = ${propertyIdExpr} and own_r.status = 'IN_HOUSE')::int as "inHouse"`;
}

/**
 * Per night of [`fromExpr`, `toExpr`) (dates): the room nights on the books in one of the statuses `statusesExpr`
 * (text[]) as `sold`, and their nightly prices summed as `revenue` (text), with the night as `date`. The room lines
 * and the reservations arriving from 60 nights (the longest stay) before the range are each read once by arrival
 * date, hashed together and spread over their nights in the range: the cost follows the range, not the history.
 * (Read as a join, the planner expected a fifth of a year's stays and looked each one's lines up by reservation: one
 * index lookup per stay into every line the hotels ever sold, 1.4x the demo database's time at 2 million lines.)
 */
export function roomNightsByDaySql(
  propertyIdExpr: string,
  fromExpr: string,
  toExpr: string,
  statusesExpr: string,
): string {
  const arriving = `property_id = ${propertyIdExpr} and arrival_date >= ${fromExpr} - 60 and arrival_date < ${toExpr}`;
  return `with own_rr as materialized (select reservation_id, arrival_date, nightly_minor from reservation_rooms where ${arriving}),
    own_r as materialized (select id, arrival_date, departure_date from reservations
      where ${arriving} and departure_date > ${fromExpr} and status = any(${statusesExpr}))
  select n.date, count(*)::int as sold, sum(own_rr.nightly_minor[(n.date - own_rr.arrival_date) + 1])::text as revenue
    from own_rr join own_r on own_r.id = own_rr.reservation_id
   cross join lateral (select d::date as date from generate_series(greatest(own_r.arrival_date, ${fromExpr}), least(own_r.departure_date, ${toExpr}) - 1, interval '1 day') d) n
   group by n.date`;
}
