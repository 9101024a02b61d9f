import type pg from "pg";
import type { Queryable } from "../../db/queryable.ts";
import type { DepositDueAnchor, PolicyFeeKind } from "./inventory.repository.ts";

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
): Promise<{ ratePlanId: string; roomTypeId: string; nights: number; total: string; firstNight: string }[]> {
  return q.query(
    `select rate_plan_id as "ratePlanId", room_type_id as "roomTypeId", count(*)::int as nights, sum(amount_minor)::text as total,
            (array_agg(amount_minor order by date))[1]::text as "firstNight"
       from daily_prices where property_id = $1 and date >= $2::date and date < $3::date group by rate_plan_id, room_type_id`,
    [propertyId, from, to],
  );
}

/** The id of the room type or rate plan with this code at the property (the operators' mapping tool). */
export async function findCatalogueId(
  q: Queryable,
  propertyId: string,
  kind: "room_type" | "rate_plan",
  code: string,
): Promise<string | undefined> {
  const [row] = await q.query<{ id: string }>(
    kind === "room_type"
      ? "select id from room_types where property_id = $1 and code = $2"
      : "select id from rate_plans where property_id = $1 and code = $2",
    [propertyId, code],
  );
  return row?.id;
}

// The partner reads (connectivity's room types, rate plans and ARI): one query each on the pool.

export interface RoomTypeRow {
  id: string;
  code: string;
  name: string;
  room_count: number;
}

export async function roomTypesOf(pool: pg.Pool, propertyId: string): Promise<RoomTypeRow[]> {
  return (
    await pool.query<RoomTypeRow>(
      "select id, code, name, room_count from room_types where property_id = $1 order by code",
      [propertyId],
    )
  ).rows;
}

export async function ratePlansOf(pool: pg.Pool, propertyId: string): Promise<PartnerRatePlan[]> {
  const { rows } = await pool.query<
    Omit<PartnerRatePlan, "room_type_codes" | "policy" | "deposit" | "pricesByOccupancy"> & {
      prices_by_occupancy: boolean;
      room_type_codes: string[] | null;
      free_hours: number | null;
      fee_kind: PolicyFeeKind | null;
      fee_value: string | null;
      deposit_kind: PolicyFeeKind | null;
      deposit_value: string | null;
      due_anchor: DepositDueAnchor | null;
      due_days: number | null;
    }
  >(
    `select rp.id, rp.code, rp.name, array_agg(rt.code order by rt.code) filter (where rt.code is not null) as room_type_codes,
            rp.policy_free_hours as free_hours, rp.policy_fee_kind as fee_kind, rp.policy_fee_value::text as fee_value,
            rp.prices_by_occupancy, rp.deposit_kind, rp.deposit_value::text as deposit_value, rp.deposit_due_anchor as due_anchor, rp.deposit_due_days as due_days
       from rate_plans rp
       left join rate_plan_room_types x on x.property_id = rp.property_id and x.rate_plan_id = rp.id
       left join room_types rt on rt.property_id = x.property_id and rt.id = x.room_type_id
      where rp.property_id = $1
      group by rp.id, rp.code, rp.name
      order by rp.code`,
    [propertyId],
  );
  return rows.map((r) => ({
    id: r.id,
    code: r.code,
    name: r.name,
    room_type_codes: r.room_type_codes ?? [],
    pricesByOccupancy: r.prices_by_occupancy,
    policy:
      r.fee_kind === null
        ? null
        : { freeUntilHours: r.free_hours!, feeKind: r.fee_kind, feeValue: BigInt(r.fee_value!) },
    deposit:
      r.deposit_kind === null
        ? null
        : { kind: r.deposit_kind, value: BigInt(r.deposit_value!), dueAnchor: r.due_anchor!, dueDays: r.due_days! },
  }));
}

/** A rate plan as partners read it: its codes, room types and the terms of a booking made now. */
export interface PartnerRatePlan {
  id: string;
  code: string;
  name: string;
  room_type_codes: string[];
  pricesByOccupancy: boolean;
  policy: { freeUntilHours: number; feeKind: PolicyFeeKind; feeValue: bigint } | null;
  deposit: { kind: PolicyFeeKind; value: bigint; dueAnchor: DepositDueAnchor; dueDays: number } | null;
}
