import type { KeyPage } from "../../lib/page.ts";
import type { Queryable } from "../../db/queryable.ts";

/** The catalogue of a property: room types, rooms, rate plans (with their policies) and room blocks. */

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
export const depositJsonSql = (rp: string) => `case when ${rp}.deposit_kind is null then null else json_build_object(
    'kind', ${rp}.deposit_kind, 'value', ${rp}.deposit_value::text, 'dueAnchor', ${rp}.deposit_due_anchor,
    'dueDays', ${rp}.deposit_due_days) end`;
export type DepositRaw = Omit<RatePlanDeposit, "value"> & { value: string };
export const depositOf = (d: DepositRaw | null): RatePlanDeposit | null =>
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

export async function insertRoomBlock(
  q: Queryable,
  propertyId: string,
  block: { id: string; roomTypeId: string; name: string; from: string; to: string; count: number },
  now: Date,
): Promise<void> {
  await q.query(
    "insert into room_blocks (id, property_id, room_type_id, name, from_date, to_date, count, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)",
    [block.id, propertyId, block.roomTypeId, block.name, block.from, block.to, block.count, now],
  );
}
