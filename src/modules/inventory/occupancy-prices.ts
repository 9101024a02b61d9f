import { recordChange } from "../audit/index.ts";
import type { Queryable, Statement } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { AppError, type FieldViolation } from "../../errors.ts";
import * as repo from "./inventory.repository.ts";
import type { RatePlan, RoomType } from "./inventory.repository.ts";

/**
 * Occupancy pricing: a rate plan flagged `pricesByOccupancy` prices a room per number of adults. The day's price
 * (daily_prices) is the price for the room type's max occupancy; daily_occupancy_prices holds the prices for fewer
 * adults. A booking of n adults pays the price for n where one is set, else the day's price.
 */

/** A nightly price for a number of adults. */
export interface OccupancyPrice {
  adults: number;
  priceMinor: bigint;
}

/** The most adults a room type may hold (room types' max occupancy is 1 to 20). */
const maxAdults = 20;

/**
 * The bad fields of a change's occupancy prices that need no stored data, named `${at}.occupancyPrices[j].<field>`:
 * adults whole and 1 to 20, each at most once, prices 0 to `maxPrice`.
 */
export function occupancyViolations(at: string, prices: readonly OccupancyPrice[], maxPrice: bigint): FieldViolation[] {
  const out: FieldViolation[] = [];
  const seen = new Set<number>();
  for (const [j, p] of prices.entries()) {
    const field = `${at}.occupancyPrices[${j}]`;
    if (!Number.isInteger(p.adults) || p.adults < 1 || p.adults > maxAdults)
      out.push({ field: `${field}.adults`, reason: `1 to the room type's max occupancy (at most ${maxAdults})` });
    else if (seen.has(p.adults)) out.push({ field: `${field}.adults`, reason: `${p.adults} adults given twice` });
    seen.add(p.adults);
    if (p.priceMinor < 0n || p.priceMinor > maxPrice)
      out.push({ field: `${field}.priceMinor`, reason: `0 to ${maxPrice} minor units` });
  }
  return out;
}

/**
 * The bad fields of a change's occupancy prices against its rate plan and room type: the plan must price by
 * occupancy, and adults be at most the room type's max occupancy.
 */
export function occupancyPlanViolations(
  at: string,
  prices: readonly OccupancyPrice[],
  plan: Pick<RatePlan, "code" | "pricesByOccupancy">,
  roomType: Pick<RoomType, "code" | "maxOccupancy">,
): FieldViolation[] {
  if (prices.length === 0) return [];
  if (!plan.pricesByOccupancy)
    return [{ field: `${at}.occupancyPrices`, reason: `rate plan ${plan.code} does not price by occupancy` }];
  return prices.flatMap((p, j) =>
    p.adults > roomType.maxOccupancy
      ? [
          {
            field: `${at}.occupancyPrices[${j}].adults`,
            reason: `1 to ${roomType.maxOccupancy} (the max occupancy of room type ${roomType.code})`,
          },
        ]
      : [],
  );
}

/** One cell set of occupancy prices below max occupancy: the rows the write statement unnests. */
export interface OccupancyWrite {
  ratePlanId: string;
  roomTypeId: string;
  from: string;
  to: string;
  weekdayMask: number;
  adults: number;
  priceMinor: bigint;
}

/**
 * Occupancy prices upserted for the chosen weekdays of each range (a later row of the same day and adults wins).
 * Runs after the ARI write's statement, under its rate lock. Named (ADR 0004): one fixed text.
 */
const occupancyStatement: Statement = {
  name: "inventory_occupancy_write",
  text: `with c as (select * from unnest($2::uuid[], $3::uuid[], $4::date[], $5::date[], $6::int[], $7::int[], $8::bigint[])
                      with ordinality as c(rp, rt, f, t, wd, adults, price, n)),
     cells as (select c.*, d.day::date as day
                 from c cross join lateral generate_series(c.f, c.t - 1, interval '1 day') as d(day)
                where (c.wd >> (extract(isodow from d.day)::int - 1)) & 1 = 1),
     merged as (select rp, rt, day, adults, (array_agg(price order by n desc))[1] as price
                  from cells group by rp, rt, day, adults)
     insert into daily_occupancy_prices (property_id, rate_plan_id, room_type_id, date, adults, amount_minor)
     select $1, rp, rt, day, adults, price from merged order by rp, rt, day, adults
     on conflict (property_id, rate_plan_id, room_type_id, date, adults) do update set amount_minor = excluded.amount_minor`,
};

export async function writeOccupancyPrices(tx: Tx, propertyId: string, rows: readonly OccupancyWrite[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(occupancyStatement, [
    propertyId,
    rows.map((r) => r.ratePlanId),
    rows.map((r) => r.roomTypeId),
    rows.map((r) => r.from),
    rows.map((r) => r.to),
    rows.map((r) => r.weekdayMask),
    rows.map((r) => r.adults),
    rows.map((r) => r.priceMinor.toString()),
  ]);
}

/**
 * The stored prices below max occupancy of the occupancy plans among `pairs` over [from, to), by
 * `${ratePlanId}|${roomTypeId}` then day index, each day's in adults order.
 */
export async function readOccupancyPrices(
  q: Queryable,
  propertyId: string,
  pairs: readonly { ratePlanId: string; roomTypeId: string }[],
  from: string,
  to: string,
): Promise<Map<string, Map<number, OccupancyPrice[]>>> {
  const out = new Map<string, Map<number, OccupancyPrice[]>>();
  if (pairs.length === 0) return out;
  const rows = await q.query<{ rp: string; rt: string; i: number; adults: number; price: string }>(
    `select o.rate_plan_id as rp, o.room_type_id as rt, (o.date - $4::date) as i, o.adults, o.amount_minor::text as price
       from daily_occupancy_prices o
       join unnest($2::uuid[], $3::uuid[]) as p(rp, rt) on o.rate_plan_id = p.rp and o.room_type_id = p.rt
      where o.property_id = $1 and o.date >= $4::date and o.date < $5::date
      order by o.rate_plan_id, o.room_type_id, o.date, o.adults`,
    [propertyId, pairs.map((p) => p.ratePlanId), pairs.map((p) => p.roomTypeId), from, to],
  );
  for (const r of rows) {
    const key = `${r.rp}|${r.rt}`;
    const days = out.get(key) ?? new Map<number, OccupancyPrice[]>();
    out.set(key, days);
    days.set(r.i, [...(days.get(r.i) ?? []), { adults: r.adults, priceMinor: BigInt(r.price) }]);
  }
  return out;
}

/**
 * A day's occupancy prices as reads show them: the stored ones below max occupancy, then the day's price as the
 * price for max occupancy (when the day has one).
 */
export function dayOccupancyPrices(
  stored: readonly OccupancyPrice[] | undefined,
  maxOccupancy: number,
  dayPrice: bigint | undefined,
): OccupancyPrice[] {
  const below = (stored ?? []).filter((p) => p.adults < maxOccupancy);
  return dayPrice === undefined ? below : [...below, { adults: maxOccupancy, priceMinor: dayPrice }];
}

/** SetRatePlanOccupancyPricing's write in the caller's transaction, audited (entity "rate_plan"). */
export async function writeRatePlanOccupancyPricing(
  tx: Tx,
  propertyId: string,
  ratePlanId: string,
  on: boolean,
): Promise<RatePlan> {
  const before = await repo.findRatePlan(tx, propertyId, ratePlanId);
  if (before === undefined) throw new AppError("not_found", "Rate plan not found.");
  await tx.query("update rate_plans set prices_by_occupancy = $3 where property_id = $1 and id = $2", [
    propertyId,
    ratePlanId,
    on,
  ]);
  const after = (await repo.findRatePlan(tx, propertyId, ratePlanId))!;
  recordChange(tx, {
    propertyId,
    entity: "rate_plan",
    entityId: ratePlanId,
    action: "occupancy_pricing",
    before,
    after,
  });
  return after;
}
