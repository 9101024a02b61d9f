import type { KeyPage } from "../../lib/page.ts";
import { isUuid } from "../../lib/ids.ts";
import { statementFamily, type Queryable } from "../../db/queryable.ts";
import { activePropertyRowSql, propertyFieldSql, type PropertyRow } from "../properties/index.ts";
import { restrictionRowsSql, type RestrictionRow } from "./restrictions.ts";
import { lockRates } from "./rate-lock.ts";

export const roomStatuses = ["CLEAN", "DIRTY", "INSPECTED", "OUT_OF_ORDER"] as const;
export type RoomStatus = (typeof roomStatuses)[number];
export const boardTypes = ["ROOM_ONLY", "BED_AND_BREAKFAST", "HALF_BOARD", "FULL_BOARD", "ALL_INCLUSIVE"] as const;
export type BoardType = (typeof boardTypes)[number];

export interface RoomType {
  id: string;
  code: string;
  name: string;
  maxOccupancy: number;
  roomCount: number;
}

export interface Room {
  id: string;
  number: string;
  roomTypeId: string;
  status: RoomStatus;
}

export interface RatePlan {
  id: string;
  code: string;
  name: string;
  boardType: BoardType;
  roomTypeIds: string[];
  /** The cancellation and no-show policy, or null when cancelling is always free. */
  policy: RatePlanPolicy | null;
  /** The deposit a booking owes, or null when none is asked. */
  deposit: RatePlanDeposit | null;
  /** A day has a price per number of adults (occupancy-prices.ts). */
  pricesByOccupancy: boolean;
}

export const depositDueAnchors = ["AFTER_BOOKING", "BEFORE_ARRIVAL"] as const;
export type DepositDueAnchor = (typeof depositDueAnchors)[number];

/**
 * A deposit per room line: the first night, `value` basis points of the line's total (PERCENT) or `value` minor units
 * (FIXED, at most the line's total), due `dueDays` days after the booking's business date (AFTER_BOOKING) or before
 * the arrival date (BEFORE_ARRIVAL), never after the arrival date nor before the booking's business date.
 */
export interface RatePlanDeposit {
  kind: PolicyFeeKind;
  value: bigint;
  dueAnchor: DepositDueAnchor;
  dueDays: number;
}

export const policyFeeKinds = ["FIRST_NIGHT", "PERCENT", "FIXED"] as const;
export type PolicyFeeKind = (typeof policyFeeKinds)[number];

/**
 * Free until `freeHours` hours before arrival (midnight of the arrival date in the hotel's time zone), then a fee:
 * the first night, `feeValue` basis points of the stay total (PERCENT) or `feeValue` minor units (FIXED). A no-show
 * owes the same fee.
 */
export interface RatePlanPolicy {
  freeHours: number;
  feeKind: PolicyFeeKind;
  feeValue: bigint;
}

const roomTypeCols = `id, code, name, max_occupancy as "maxOccupancy", room_count as "roomCount"`;
const roomCols = `id, number, room_type_id as "roomTypeId", status`;
const depositJsonSql = (rp: string) => `case when ${rp}.deposit_kind is null then null else json_build_object(
    'kind', ${rp}.deposit_kind, 'value', ${rp}.deposit_value::text, 'dueAnchor', ${rp}.deposit_due_anchor,
    'dueDays', ${rp}.deposit_due_days) end`;
type DepositRaw = Omit<RatePlanDeposit, "value"> & { value: string };
const depositOf = (d: DepositRaw | null): RatePlanDeposit | null =>
  d === null ? null : { ...d, value: BigInt(d.value) };

const ratePlanCols = `rp.id, rp.code, rp.name, rp.board_type as "boardType", rp.prices_by_occupancy as "pricesByOccupancy",
  case when rp.policy_fee_kind is null then null else json_build_object('freeHours', rp.policy_free_hours,
    'feeKind', rp.policy_fee_kind, 'feeValue', rp.policy_fee_value::text) end as policy,
  ${depositJsonSql("rp")} as deposit,
  coalesce((select array_agg(x.room_type_id::text order by x.room_type_id) from rate_plan_room_types x
             where x.property_id = rp.property_id and x.rate_plan_id = rp.id), '{}') as "roomTypeIds"`;

export async function insertRoomType(
  q: Queryable,
  propertyId: string,
  rt: Omit<RoomType, "roomCount">,
  now: Date,
): Promise<RoomType> {
  const [row] = await q.query<RoomType>(
    `insert into room_types (id, property_id, code, name, max_occupancy, created_at) values ($1, $2, $3, $4, $5, $6) returning ${roomTypeCols}`,
    [rt.id, propertyId, rt.code, rt.name, rt.maxOccupancy, now],
  );
  return row!;
}

/** The property's room types by code; with `page`, the `page.limit` + 1 after the code `page.after[0]`. */
export function listRoomTypes(q: Queryable, propertyId: string, page?: KeyPage): Promise<RoomType[]> {
  return q.query<RoomType>(
    `select ${roomTypeCols} from room_types where property_id = $1 and ($2::text is null or code > $2) order by code limit $3`,
    [propertyId, page?.after?.[0] ?? null, page === undefined ? null : page.limit + 1],
  );
}

export async function findRoomType(q: Queryable, propertyId: string, id: string): Promise<RoomType | undefined> {
  const [row] = await q.query<RoomType>(`select ${roomTypeCols} from room_types where property_id = $1 and id = $2`, [
    propertyId,
    id,
  ]);
  return row;
}

export async function insertRoom(q: Queryable, propertyId: string, room: Room, now: Date): Promise<Room> {
  const [row] = await q.query<Room>(
    `insert into rooms (id, property_id, room_type_id, number, status, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $6) returning ${roomCols}`,
    [room.id, propertyId, room.roomTypeId, room.number, room.status, now],
  );
  return row!;
}

/** The property's rooms by number; with `page`, the `page.limit` + 1 after the number `page.after[0]`. */
export function listRooms(q: Queryable, propertyId: string, page?: KeyPage): Promise<Room[]> {
  return q.query<Room>(
    `select ${roomCols} from rooms where property_id = $1 and ($2::text is null or number > $2) order by number limit $3`,
    [propertyId, page?.after?.[0] ?? null, page === undefined ? null : page.limit + 1],
  );
}

/** The room, locked for update when `lock` (status changes, assignment and check-in serialise per room). */
export async function findRoom(q: Queryable, propertyId: string, id: string, lock = false): Promise<Room | undefined> {
  const [row] = await q.query<Room>(
    `select ${roomCols} from rooms where property_id = $1 and id = $2${lock ? " for update" : ""}`,
    [propertyId, id],
  );
  return row;
}

export async function updateRoomStatus(
  q: Queryable,
  propertyId: string,
  id: string,
  status: RoomStatus,
  now: Date,
): Promise<Room> {
  const [row] = await q.query<Room>(
    `update rooms set status = $3, updated_at = $4 where property_id = $1 and id = $2 returning ${roomCols}`,
    [propertyId, id, status, now],
  );
  return row!;
}

export interface OutOfOrderRange {
  id: string;
  fromDate: string;
  toDate: string;
}

/** Out-of-order ranges of a room with a day in [from, to), by first day. */
export function outOfOrderBetween(
  q: Queryable,
  propertyId: string,
  roomId: string,
  from: string,
  to: string,
): Promise<OutOfOrderRange[]> {
  return q.query<OutOfOrderRange>(
    `select id, to_char(from_date, 'YYYY-MM-DD') as "fromDate", to_char(to_date, 'YYYY-MM-DD') as "toDate"
       from room_out_of_order where property_id = $1 and room_id = $2 and to_date > $3 and from_date < $4 order by from_date`,
    [propertyId, roomId, from, to],
  );
}

/** An out-of-order period as the API shows it. */
export interface OutOfOrderPeriod {
  id: string;
  roomId: string;
  roomNumber: string;
  roomTypeId: string;
  from: string;
  /** Exclusive: the first day back in service. */
  to: string;
  reason: string;
  createdAt: Date;
  updatedAt: Date;
}

const periodCols = `o.id, o.room_id as "roomId", m.number as "roomNumber", m.room_type_id as "roomTypeId",
  to_char(o.from_date, 'YYYY-MM-DD') as "from", to_char(o.to_date, 'YYYY-MM-DD') as "to", o.reason,
  o.created_at as "createdAt", o.updated_at as "updatedAt"`;

/** One period of the property, locked for a change when `lock`. */
export async function findOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  id: string,
  lock = false,
): Promise<OutOfOrderPeriod | undefined> {
  const [row] = await q.query<OutOfOrderPeriod>(
    `select ${periodCols} from room_out_of_order o join rooms m on m.property_id = o.property_id and m.id = o.room_id
      where o.property_id = $1 and o.id = $2${lock ? " for update of o" : ""}`,
    [propertyId, id],
  );
  return row;
}

/** Periods of the property (of one room when `roomId`) with a day in [from, to) (`to` null: no end), by first day. */
export function listOutOfOrderPeriods(
  q: Queryable,
  propertyId: string,
  filter: { roomId: string | null; from: string; to: string | null; limit: number; after?: string[] | undefined },
): Promise<OutOfOrderPeriod[]> {
  // `after`: the (first day, room number, id) of the previous page's last period
  return q.query<OutOfOrderPeriod>(
    `select ${periodCols} from room_out_of_order o join rooms m on m.property_id = o.property_id and m.id = o.room_id
      where o.property_id = $1 and ($2::uuid is null or o.room_id = $2) and o.to_date > $3::date
        and ($4::date is null or o.from_date < $4::date)
        and ($6::date is null or (o.from_date, m.number, o.id) > ($6::date, $7::text, $8::uuid))
      order by o.from_date, m.number, o.id limit $5`,
    [propertyId, filter.roomId, filter.from, filter.to, filter.limit, ...(filter.after ?? [null, null, null])],
  );
}

export async function insertOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  p: { id: string; roomId: string; from: string; to: string; reason: string },
  now: Date,
): Promise<void> {
  await q.query(
    `insert into room_out_of_order (id, property_id, room_id, from_date, to_date, reason, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [p.id, propertyId, p.roomId, p.from, p.to, p.reason, now],
  );
}

export async function updateOutOfOrderPeriod(
  q: Queryable,
  propertyId: string,
  id: string,
  p: { from: string; to: string; reason: string },
  now: Date,
): Promise<void> {
  await q.query(
    "update room_out_of_order set from_date = $3, to_date = $4, reason = $5, updated_at = $6 where property_id = $1 and id = $2",
    [propertyId, id, p.from, p.to, p.reason, now],
  );
}

export async function deleteOutOfOrderPeriod(q: Queryable, propertyId: string, id: string): Promise<void> {
  await q.query("delete from room_out_of_order where property_id = $1 and id = $2", [propertyId, id]);
}

export async function insertRatePlan(
  q: Queryable,
  propertyId: string,
  rp: Omit<RatePlan, "policy" | "deposit">,
  now: Date,
): Promise<void> {
  await q.query(
    `insert into rate_plans (id, property_id, code, name, board_type, created_at, prices_by_occupancy)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [rp.id, propertyId, rp.code, rp.name, rp.boardType, now, rp.pricesByOccupancy],
  );
  await q.query(
    "insert into rate_plan_room_types (property_id, rate_plan_id, room_type_id) select $1, $2, unnest($3::uuid[])",
    [propertyId, rp.id, rp.roomTypeIds],
  );
}

/**
 * How many room types or rate plans a property has, counted under a transaction lock of the property and table, so
 * that of concurrent transactions adding one, each counts the rows the earlier ones added.
 */
export async function countOfProperty(
  tx: Queryable,
  table: "room_types" | "rate_plans",
  propertyId: string,
): Promise<number> {
  // the count is its own statement: a statement's snapshot is taken before a lock it waits for
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`${table}:${propertyId}`]);
  const [row] = await tx.query<{ n: number }>(`select count(*)::int as n from ${table} where property_id = $1`, [
    propertyId,
  ]);
  return row!.n;
}

type RatePlanRaw = Omit<RatePlan, "policy" | "deposit"> & {
  policy: { freeHours: number; feeKind: PolicyFeeKind; feeValue: string } | null;
  deposit: DepositRaw | null;
};
const ratePlanOf = ({ policy, deposit, ...rp }: RatePlanRaw): RatePlan => ({
  ...rp,
  policy: policy === null ? null : { ...policy, feeValue: BigInt(policy.feeValue) },
  deposit: depositOf(deposit),
});

/** The property's rate plans by code; with `page`, the `page.limit` + 1 after the code `page.after[0]`. */
export async function listRatePlans(q: Queryable, propertyId: string, page?: KeyPage): Promise<RatePlan[]> {
  const rows = await q.query<RatePlanRaw>(
    `select ${ratePlanCols} from rate_plans rp where rp.property_id = $1 and ($2::text is null or rp.code > $2) order by rp.code limit $3`,
    [propertyId, page?.after?.[0] ?? null, page === undefined ? null : page.limit + 1],
  );
  return rows.map(ratePlanOf);
}

export async function findRatePlan(q: Queryable, propertyId: string, id: string): Promise<RatePlan | undefined> {
  const [row] = await q.query<RatePlanRaw>(
    `select ${ratePlanCols} from rate_plans rp where rp.property_id = $1 and rp.id = $2`,
    [propertyId, id],
  );
  return row === undefined ? undefined : ratePlanOf(row);
}

/** Sets (or with null removes) a rate plan's cancellation and no-show policy. */
export async function updateRatePlanPolicy(
  q: Queryable,
  propertyId: string,
  id: string,
  policy: RatePlanPolicy | null,
): Promise<void> {
  await q.query(
    `update rate_plans set policy_free_hours = $3, policy_fee_kind = $4, policy_fee_value = $5::bigint
      where property_id = $1 and id = $2`,
    [propertyId, id, policy?.freeHours ?? null, policy?.feeKind ?? null, policy?.feeValue.toString() ?? null],
  );
}

/** Sets (or with null removes) a rate plan's deposit rule. */
export async function updateRatePlanDeposit(
  q: Queryable,
  propertyId: string,
  id: string,
  deposit: RatePlanDeposit | null,
): Promise<void> {
  await q.query(
    `update rate_plans set deposit_kind = $3, deposit_value = $4::bigint, deposit_due_anchor = $5, deposit_due_days = $6
      where property_id = $1 and id = $2`,
    [
      propertyId,
      id,
      deposit?.kind ?? null,
      deposit?.value.toString() ?? null,
      deposit?.dueAnchor ?? null,
      deposit?.dueDays ?? null,
    ],
  );
}

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
  await lockRates(q, propertyId);
  const rows = await q.query(
    `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select $1, $2, $3, d.day::date, $6 from generate_series($4::date, $5::date - 1, interval '1 day') as d(day)
     on conflict (property_id, rate_plan_id, room_type_id, date) do update set amount_minor = excluded.amount_minor
     returning 1`,
    [propertyId, ratePlanId, roomTypeId, from, to, amountMinor.toString()],
  );
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
