import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { chargesOnDaySql } from "../folio/index.ts";
import { roomCountsOnDaySql, sellableRoomsByDaySql } from "../inventory/index.ts";
import { activePropertyRowSql, propertyById } from "../properties/index.ts";
import {
  dayMovementsSql,
  overdueDepositsSummary,
  roomNightsByDaySql,
  type OverdueDeposit,
} from "../reservations/index.ts";

interface Dashboard {
  businessDate: string;
  arrivals: number;
  departures: number;
  inHouse: number;
  roomsTotal: number;
  roomsAvailable: number;
  roomsOutOfOrder: number;
  roomsSold: number;
  /** Basis points (10000 = 100 %), integer division. */
  occupancyBp: number;
  revenueMinor: bigint;
  currency: string;
  amountScale: number;
  /** The first overdue deposits (earliest due date first) and how many there are. */
  overdueDeposits: OverdueDeposit[];
  overdueDepositCount: number;
}

/** How many overdue deposits the dashboard lists. */
const dashboardOverdueDeposits = 20;

export interface ForecastDay {
  date: string;
  roomsAvailable: number;
  roomsSold: number;
  occupancyBp: number;
  /** revenueMinor / roomsSold rounded down; 0 when nothing is sold. */
  adrMinor: bigint;
  revenueMinor: bigint;
}

interface Forecast {
  year: number;
  month: number;
  currency: string;
  amountScale: number;
  days: ForecastDay[];
}

export interface StatsService {
  dashboard(propertyId: string): Promise<Dashboard>;
  forecast(propertyId: string, input: { year: number; month: number; includeOptions: boolean }): Promise<Forecast>;
}

const occupancy = (sold: number, sellable: number): number =>
  sellable <= 0 ? 0 : Math.floor((sold * 10000) / sellable);

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

/**
 * Per night of [from, to): sellable rooms, room nights on the books (GUARANTEED, IN_HOUSE and CHECKED_OUT;
 * `includeOptions` adds TENTATIVE), occupancy, ADR and revenue. The forecast and the occupancy report.
 */
export async function occupancyDays(
  q: Queryable,
  propertyId: string,
  from: string,
  to: string,
  includeOptions: boolean,
): Promise<ForecastDay[]> {
  const statuses = ["GUARANTEED", "IN_HOUSE", "CHECKED_OUT", ...(includeOptions ? ["TENTATIVE"] : [])];
  const rows = await q.query<{ date: string; sellable: number; sold: number; revenue: string }>(forecastSql, [
    propertyId,
    from,
    to,
    statuses,
  ]);
  return rows.map((r) => {
    const revenue = BigInt(r.revenue);
    return {
      date: r.date,
      roomsAvailable: r.sellable,
      roomsSold: r.sold,
      occupancyBp: occupancy(r.sold, r.sellable),
      adrMinor: r.sold === 0 ? 0n : revenue / BigInt(r.sold),
      revenueMinor: revenue,
    };
  });
}

/** Dashboard and monthly forecast of one property (the session's active property, resolved by the caller). */
export function createStatsService(deps: { pool: pg.Pool }): StatsService {
  const reads = poolQueryable(deps.pool);
  return {
    async dashboard(propertyId) {
      const [[row], overdue] = await Promise.all([
        reads.query<{
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
        }>(dashboardSql, [propertyId]),
        overdueDepositsSummary(reads, propertyId, dashboardOverdueDeposits),
      ]);
      if (row === undefined) throw new AppError("not_found", "Property not found.");
      return {
        businessDate: row.businessDate,
        arrivals: row.arrivals,
        departures: row.departures,
        inHouse: row.inHouse,
        roomsTotal: row.total,
        roomsAvailable: Math.max(0, row.total - row.sold - row.blocked - row.ooo),
        roomsOutOfOrder: row.ooo,
        roomsSold: row.sold,
        occupancyBp: occupancy(row.sold, row.total - row.ooo),
        revenueMinor: BigInt(row.revenue),
        currency: row.currency,
        amountScale: row.amountScale,
        overdueDeposits: overdue.first,
        overdueDepositCount: overdue.count,
      };
    },

    async forecast(propertyId, input) {
      if (!Number.isInteger(input.year) || input.year < 2000 || input.year > 2100)
        throw invalidField("year", "2000 to 2100");
      if (!Number.isInteger(input.month) || input.month < 1 || input.month > 12) throw invalidField("month", "1 to 12");
      const from = `${input.year}-${String(input.month).padStart(2, "0")}-01`;
      const to =
        input.month === 12 ? `${input.year + 1}-01-01` : `${input.year}-${String(input.month + 1).padStart(2, "0")}-01`;
      const [property, days] = await Promise.all([
        propertyById(reads, propertyId),
        occupancyDays(reads, propertyId, from, to, input.includeOptions),
      ]);
      return {
        year: input.year,
        month: input.month,
        currency: property.currency,
        amountScale: property.amountScale,
        days,
      };
    },
  };
}
