import type { Queryable } from "../../db/queryable.ts";

/** The ARI grid's prices and restrictions, read packed per (rate plan, room type) and unpacked into days. */

/**
 * One day of a rate plan x room type: availability, price and restrictions, built once in the shape the ARI answers
 * send (undefined where nothing is set), so a 366-day read of 250 pairs makes one object per day, not two.
 */
export interface AriDay {
  date: string;
  available: number;
  /** undefined: not sold that day. */
  priceMinor: bigint | undefined;
  minStay: number | undefined;
  maxStay: number | undefined;
  closedToArrival: boolean;
  closedToDeparture: boolean;
  stopSell: boolean;
  /** A plan that prices by occupancy: its prices per number of adults (occupancy-prices.ts); absent otherwise. */
  occupancyPrices?: Record<number, bigint>;
}

export interface GridRow {
  rt: string;
  /** int8[] in PostgreSQL's text form (`{1,2,3}`): amount * 512 + day index, one element per stored price. */
  prices: string | null;
  /** int4[]: day index << 21 | the day's restrictions (RESTRICTION_BITS), one element per stored day. */
  restrictions: string | null;
}

/** A one-dimensional int array in PostgreSQL's text form as numbers, with one JSON.parse. */
function ints(text: string | null): number[] {
  return text === null ? [] : (JSON.parse(`[${text.slice(1, -1)}]`) as number[]);
}

/**
 * A day's restrictions as one int (stays are 1-366 by the table's checks, 9 bits each): min_stay | max_stay << 9 |
 * closed to arrival << 18 | closed to departure << 19 | stop sell << 20. PostgreSQL's | and << share one
 * precedence, left to right: every shift is in parentheses.
 */
const RESTRICTION_BITS =
  "coalesce(min_stay, 0) | (coalesce(max_stay, 0) << 9) | (closed_to_arrival::int << 18) | (closed_to_departure::int << 19) | (stop_sell::int << 20)";

/**
 * Prices and restrictions of (rate plan, room type) pairs over [from, to). One query per rate plan, run side by
 * side on the pool: each reads the plan's rows and folds each room type's days into one flat int array per table,
 * each element a day index and the day's value packed into one integer (a price is never negative, a range is at
 * most 366 days: 9 bits; a price beyond 2^54 minor units, never written by setPrices, fails the read as out of
 * range instead of wrapping). PostgreSQL appends one scalar per row (far cheaper than arrays of arrays), and one
 * JSON.parse reads an array far faster than node-postgres parses one row per day. Returns each pair's packed row by
 * `${ratePlanId}|${roomTypeId}` (undefined: nothing stored); ariDays turns one into days when they are needed.
 */
export async function readRatesAndRestrictions(
  q: Queryable,
  propertyId: string,
  pairs: readonly { ratePlanId: string; roomTypeId: string }[],
  from: string,
  to: string,
): Promise<Map<string, GridRow | undefined>> {
  const byPlan = new Map<string, string[]>();
  for (const p of pairs) byPlan.set(p.ratePlanId, [...(byPlan.get(p.ratePlanId) ?? []), p.roomTypeId]);
  const out = new Map<string, GridRow | undefined>();
  await Promise.all(
    [...byPlan].map(async ([ratePlanId, roomTypeIds]) => {
      const rows = await q.query<GridRow>(
        `select coalesce(p.rt, r.rt) as rt, p.prices, r.restrictions
           from (select room_type_id as rt, array_agg(amount_minor * 512 + (date - $4::date))::text as prices
                   from daily_prices
                  where property_id = $1 and rate_plan_id = $2 and room_type_id = any($3::uuid[]) and date >= $4::date and date < $5::date
                  group by room_type_id) p
           full join (select room_type_id as rt, array_agg(((date - $4::date) << 21) | ${RESTRICTION_BITS})::text as restrictions
                        from rate_restrictions
                       where property_id = $1 and rate_plan_id = $2 and room_type_id = any($3::uuid[]) and date >= $4::date and date < $5::date
                       group by room_type_id) r on r.rt = p.rt`,
        [propertyId, ratePlanId, roomTypeIds, from, to],
      );
      const found = new Map(rows.map((r) => [r.rt, r]));
      for (const rt of roomTypeIds) out.set(`${ratePlanId}|${rt}`, found.get(rt));
    }),
  );
  return out;
}

/** A pair's days from its packed row: `dates` the range's days, `available` the room type's counts by day index. */
export function ariDays(dates: readonly string[], available: readonly number[], row: GridRow | undefined): AriDay[] {
  const n = dates.length;
  const prices = new Array<bigint | undefined>(n).fill(undefined);
  const packedPrices = ints(row?.prices ?? null);
  if (packedPrices.every((v) => Number.isSafeInteger(v))) {
    for (const v of packedPrices) prices[v % 512] = BigInt((v - (v % 512)) / 512);
  } else {
    // An amount beyond 2^44 minor units: read the exact text (BigInt of a string is several times slower).
    for (const t of row!.prices!.slice(1, -1).split(",")) prices[Number(BigInt(t) & 511n)] = BigInt(t) >> 9n;
  }
  const restrictions = new Array<number>(n).fill(-1);
  for (const v of ints(row?.restrictions ?? null)) restrictions[v >> 21] = v & 0x1fffff;
  const days = new Array<AriDay>(n);
  for (let i = 0; i < n; i++) {
    const v = restrictions[i]!;
    days[i] = {
      date: dates[i]!,
      available: available[i] ?? 0,
      priceMinor: prices[i],
      minStay: v === -1 ? undefined : v & 511 || undefined,
      maxStay: v === -1 ? undefined : (v >> 9) & 511 || undefined,
      closedToArrival: v !== -1 && (v & (1 << 18)) !== 0,
      closedToDeparture: v !== -1 && (v & (1 << 19)) !== 0,
      stopSell: v !== -1 && (v & (1 << 20)) !== 0,
    };
  }
  return days;
}
