import { isUuid } from "../../lib/ids.ts";
import { statementFamily, type Queryable } from "../../db/queryable.ts";
import { activePropertyRowSql, propertyFieldSql, type PropertyRow } from "../properties/index.ts";
import {
  depositJsonSql,
  depositOf,
  type DepositRaw,
  type PolicyFeeKind,
  type RatePlanDeposit,
  type RoomType,
} from "./inventory.repository.ts";
import { lockRates } from "./rate-lock.ts";
import { restrictionRowsSql, type RestrictionRow } from "./restrictions.ts";

/** Daily prices: the staff write of a range and the reads a booking prices its nights with. */

/** Upserts one price for every date of [from, to); returns the number of dates. */
export async function upsertPrices(
  q: Queryable,
  propertyId: string,
  ratePlanId: string,
  roomTypeId: string,
  from: string,
  to: string,
  amountMinor: bigint,
): Promise<number> {
  // the lock and the write leave together (pipelined); the write runs after the lock, in a statement of its own
  const [, rows] = await Promise.all([
    lockRates(q, propertyId),
    q.query(
      `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select $1, $2, $3, d.day::date, $6 from generate_series($4::date, $5::date - 1, interval '1 day') as d(day)
     on conflict (property_id, rate_plan_id, room_type_id, date) do update set amount_minor = excluded.amount_minor
     returning 1`,
      [propertyId, ratePlanId, roomTypeId, from, to, amountMinor.toString()],
    ),
  ]);
  return rows.length;
}

/**
 * The price of a night for `adults` (`$adults`, an int or null) of a rate plan `rp` x room type `rt` (table aliases)
 * from the day row `dp`: the occupancy price for the adults where the plan prices by occupancy and one is set, else
 * the day's price.
 */
const nightPriceSql = (adults: string) =>
  `coalesce((select o.amount_minor from daily_occupancy_prices o
              where rp.prices_by_occupancy and o.property_id = dp.property_id and o.rate_plan_id = dp.rate_plan_id
                and o.room_type_id = dp.room_type_id and o.date = dp.date and o.adults = ${adults}), dp.amount_minor)`;

/**
 * Nightly prices over [from, to) in date order, for `adults` when the plan prices by occupancy (undefined: the
 * day's price); a missing date is absent from the result.
 */
export async function nightlyPrices(
  q: Queryable,
  propertyId: string,
  ratePlanId: string,
  roomTypeId: string,
  from: string,
  to: string,
  adults?: number,
): Promise<{ date: string; amountMinor: bigint }[]> {
  const rows = await q.query<{ date: string; amount: string }>(
    `select to_char(dp.date, 'YYYY-MM-DD') as date, ${nightPriceSql("$6::int")}::text as amount
       from daily_prices dp join rate_plans rp on rp.property_id = dp.property_id and rp.id = dp.rate_plan_id
      where dp.property_id = $1 and dp.rate_plan_id = $2 and dp.room_type_id = $3 and dp.date >= $4 and dp.date < $5
      order by dp.date`,
    [propertyId, ratePlanId, roomTypeId, from, to, adults ?? null],
  );
  return rows.map((r) => ({ date: r.date, amountMinor: BigInt(r.amount) }));
}

/** A rate plan's policy on a stay arriving `from`: `freeUntil` is midnight of `from` in the hotel's zone - the hours. */
export interface StayPolicy {
  freeUntilHours: number;
  feeKind: PolicyFeeKind;
  feeValue: bigint;
  freeUntil: Date;
}

export interface StayLineQuote {
  /** Undefined: no such room type in the property (or a malformed id). */
  roomType: RoomType | undefined;
  /** Undefined: no such rate plan in the property (or a malformed id). */
  ratePlan:
    | { id: string; code: string; coversRoomType: boolean; policy: StayPolicy | null; deposit: RatePlanDeposit | null }
    | undefined;
  /** The prices of the nights of [from, to) that have one, in date order. */
  nightly: bigint[];
  /** The pair's restriction rows on the days [from, to] (the departure day too): read them with violationsOf. */
  restrictions: RestrictionRow[];
}

interface StayQuoteRow extends PropertyRow {
  rtId: string | null;
  rtCode: string;
  rtName: string;
  maxOccupancy: number;
  roomCount: number;
  rpId: string | null;
  rpCode: string;
  policy: { freeUntilHours: number; feeKind: PolicyFeeKind; feeValue: string; freeUntil: string } | null;
  deposit: DepositRaw | null;
  covers: boolean;
  nightly: string[];
  restrictions: RestrictionRow[];
}

/** quoteStay's fixed text, named: every booking and change runs it (planned once per connection). */
const quoteStayStatement = statementFamily("inventory_quote_stay", 1);

/**
 * What a booking needs to check its room lines, in one round trip: the property (undefined when it is not
 * active) and, for each requested room type and rate plan pair in order, the room type, the rate plan,
 * whether the plan covers the type, the nightly prices of [from, to) and the pair's restrictions on [from, to].
 * `lines` must not be empty.
 */
export async function quoteStay(
  q: Queryable,
  propertyId: string,
  lines: readonly { roomTypeId: string; ratePlanId: string; adults?: number | undefined }[],
  from: string,
  to: string,
): Promise<{ property: PropertyRow; lines: StayLineQuote[] } | undefined> {
  const uuidOrNull = (id: string) => (isUuid(id) ? id : null);
  const rows = await q.query<StayQuoteRow>(
    quoteStayStatement(`select p.id, p.code, p.currency, p."amountScale", p."vatRateBp", p."accommodationTaxRateBp", p."businessDate",
            rt.id as "rtId", rt.code as "rtCode", rt.name as "rtName", rt.max_occupancy as "maxOccupancy", rt.room_count as "roomCount",
            rp.id as "rpId", rp.code as "rpCode",
            case when rp.policy_fee_kind is null then null else json_build_object(
              'freeUntilHours', rp.policy_free_hours, 'feeKind', rp.policy_fee_kind, 'feeValue', rp.policy_fee_value::text,
              'freeUntil', ($4::date::timestamp at time zone ${propertyFieldSql("timeZone", "p.id")})
                           - make_interval(hours => rp.policy_free_hours)) end as policy,
            ${depositJsonSql("rp")} as deposit,
            exists (select 1 from rate_plan_room_types x where x.property_id = p.id and x.rate_plan_id = rp.id and x.room_type_id = rt.id) as covers,
            array(select ${nightPriceSql("l.adults")}::text from daily_prices dp
                   where dp.property_id = p.id and dp.rate_plan_id = rp.id and dp.room_type_id = rt.id and dp.date >= $4::date and dp.date < $5::date
                   order by dp.date) as nightly,
            ${restrictionRowsSql("p.id", "rp.id", "rt.id", "$4::date", "$5::date")} as restrictions
       from (${activePropertyRowSql("$1")}) p
      cross join unnest($2::uuid[], $3::uuid[], $6::int[]) with ordinality as l(room_type_id, rate_plan_id, adults, n)
       left join room_types rt on rt.property_id = p.id and rt.id = l.room_type_id
       left join rate_plans rp on rp.property_id = p.id and rp.id = l.rate_plan_id
      order by l.n`),
    [
      propertyId,
      lines.map((l) => uuidOrNull(l.roomTypeId)),
      lines.map((l) => uuidOrNull(l.ratePlanId)),
      from,
      to,
      // an adults count a booking refuses (not whole) prices nothing special: the line is refused anyway
      lines.map((l) =>
        l.adults !== undefined && Number.isInteger(l.adults) && l.adults >= 1 && l.adults <= 20 ? l.adults : null,
      ),
    ],
  );
  const first = rows[0];
  if (first === undefined) return undefined;
  const { id, code, currency, amountScale, vatRateBp, accommodationTaxRateBp, businessDate } = first;
  const property: PropertyRow = { id, code, currency, amountScale, vatRateBp, accommodationTaxRateBp, businessDate };
  return {
    property,
    lines: rows.map((r) => ({
      roomType:
        r.rtId === null
          ? undefined
          : { id: r.rtId, code: r.rtCode, name: r.rtName, maxOccupancy: r.maxOccupancy, roomCount: r.roomCount },
      ratePlan:
        r.rpId === null
          ? undefined
          : {
              id: r.rpId,
              code: r.rpCode,
              coversRoomType: r.covers,
              policy:
                r.policy === null
                  ? null
                  : { ...r.policy, feeValue: BigInt(r.policy.feeValue), freeUntil: new Date(r.policy.freeUntil) },
              deposit: depositOf(r.deposit),
            },
      nightly: r.nightly.map(BigInt),
      restrictions: r.restrictions,
    })),
  };
}
