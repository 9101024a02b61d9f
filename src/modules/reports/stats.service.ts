import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { propertyById } from "../properties/index.ts";
import { overdueDepositsSummary, type OverdueDeposit } from "../reservations/index.ts";
import { dashboardRows, forecastRows } from "./reports.repository.ts";

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
  const rows = await forecastRows(q, propertyId, from, to, statuses);
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
        dashboardRows(reads, propertyId),
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
