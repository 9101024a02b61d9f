import type { Queryable } from "../../db/queryable.ts";
import { chargesOnDaySql } from "../folio/index.ts";
import { roomCountsOnDaySql, sellableRoomsByDaySql } from "../inventory/index.ts";
import { activePropertyRowSql } from "../properties/index.ts";
import { dayMovementsSql, roomNightsByDaySql } from "../reservations/index.ts";

// One statement: the property's business date, today's movements, tonight's room counters and the day's charges,
// each part written by its owner (properties, reservations, inventory, folio).
// Every count reads an index of today's reservations (arrivals by date, departures and in-house through partial
// indexes of IN_HOUSE and CHECKED_OUT stays), never the property's whole history.
export const dashboardSql = `
select p."businessDate", p.currency, p."amountScale",
  ${dayMovementsSql("p.id", "p.business_date")},
  ${chargesOnDaySql("p.id", "p.business_date")}::text as revenue,
  rooms.total, rooms.sold, rooms.blocked, rooms.ooo
from (${activePropertyRowSql("$1")}) p
cross join lateral (${roomCountsOnDaySql("p.id", "p.business_date")}) rooms`;

// Per night of [$2, $3): sellable rooms (inventory's room counters) and the room nights on the books with their
// nightly prices (reservations).
export const forecastSql = `
with days as (select d::date as date from generate_series($2::date, $3::date - 1, interval '1 day') d),
cap as (${sellableRoomsByDaySql("days", "$1", "$2::date", "$3::date")}),
sold as (${roomNightsByDaySql("$1", "$2::date", "$3::date", "$4::text[]")})
select to_char(days.date, 'YYYY-MM-DD') as date, coalesce(cap.sellable, 0) as sellable, coalesce(sold.sold, 0) as sold, coalesce(sold.revenue, '0') as revenue
  from days left join cap using (date) left join sold using (date)
 order by days.date`;

interface DashboardRow {
  businessDate: string;
  currency: string;
  amountScale: number;
  arrivals: number;
  departures: number;
  inHouse: number;
  revenue: string;
  total: number;
  sold: number;
  blocked: number;
  ooo: number;
}

/** The dashboard's one row (none when the property is not active). */
export function dashboardRows(q: Queryable, propertyId: string): Promise<DashboardRow[]> {
  return q.query<DashboardRow>(dashboardSql, [propertyId]);
}

/** Per night of [from, to): sellable rooms, room nights sold in `statuses` and their revenue (minor units, text). */
export function forecastRows(
  q: Queryable,
  propertyId: string,
  from: string,
  to: string,
  statuses: readonly string[],
): Promise<{ date: string; sellable: number; sold: number; revenue: string }[]> {
  return q.query(forecastSql, [propertyId, from, to, statuses]);
}

/** The record of one report run (who ran what, over which days, how many rows). */
export async function insertReportRun(
  q: Queryable,
  r: {
    id: string;
    propertyId: string;
    reportId: string;
    start: string;
    end: string;
    userId: string;
    sessionId: string;
    rowCount: number;
    truncated: boolean;
    createdAt: Date;
  },
): Promise<void> {
  await q.query(
    `insert into report_runs (id, property_id, report_id, start_date, end_date, user_id, session_id, row_count, truncated, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [r.id, r.propertyId, r.reportId, r.start, r.end, r.userId, r.sessionId, r.rowCount, r.truncated, r.createdAt],
  );
}
