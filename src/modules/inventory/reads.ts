import type { Queryable } from "../../db/queryable.ts";

/** Read-only inventory questions of other modules (night audit, mobile quotes, partner reads, reports). */

/**
 * Rooms (not out of order) whose status was last written before the start of `day` in `timeZone`: nobody set
 * their housekeeping status during that business day.
 */
export async function countRoomsStatusWrittenBefore(
  q: Queryable,
  propertyId: string,
  day: string,
  timeZone: string,
): Promise<number> {
  const [r] = await q.query<{ n: number }>(
    `select count(*)::int as n from rooms m
      where m.property_id = $1 and m.status <> 'OUT_OF_ORDER' and m.updated_at < ($2::date::timestamp at time zone $3)`,
    [propertyId, day, timeZone],
  );
  return r?.n ?? 0;
}

/** Per rate plan and room type: the nights of [from, to) that have a daily price and their sum. */
export async function stayPriceTotals(
  q: Queryable,
  propertyId: string,
  from: string,
  to: string,
): Promise<{ ratePlanId: string; roomTypeId: string; nights: number; total: string }[]> {
  return q.query(
    `select rate_plan_id as "ratePlanId", room_type_id as "roomTypeId", count(*)::int as nights, sum(amount_minor)::text as total
       from daily_prices where property_id = $1 and date >= $2::date and date < $3::date group by rate_plan_id, room_type_id`,
    [propertyId, from, to],
  );
}
