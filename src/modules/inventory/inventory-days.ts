import { AppError } from "../../errors.ts";
import { daysBetween } from "../../lib/dates.ts";
import type { Queryable } from "../../db/queryable.ts";

/** The counters of a `room_type_days` row that consume rooms. */
type DayCounter = "sold" | "blocked" | "out_of_order";

/** Rooms of one type on the dates of [from, to) in one counter: what takeRooms takes and releaseRooms gives back. */
export interface RoomDays {
  propertyId: string;
  roomTypeId: string;
  counter: DayCounter;
  from: string;
  /** Exclusive. */
  to: string;
  /** Rooms per date (1 unless given). */
  count?: number;
}

/** $1..$5 of the statements below: property, room type, from, to, count. */
const dayParams = (d: RoomDays): unknown[] => [d.propertyId, d.roomTypeId, d.from, d.to, d.count ?? 1];

/** The guarded UPDATE: adds `count` on the dates of [from, to) that still have room; returns those dates. */
async function guardedTake(tx: Queryable, d: RoomDays): Promise<string[]> {
  const rows = await tx.query<{ date: string }>(
    `update room_type_days set ${d.counter} = ${d.counter} + $5
      where property_id = $1 and room_type_id = $2 and date >= $3 and date < $4 and sold + blocked + out_of_order + $5 <= total
      returning to_char(date, 'YYYY-MM-DD') as date`,
    dayParams(d),
  );
  return rows.map((r) => r.date);
}

/**
 * Takes `count` on the dates of [from, to) not in `skip`, creating the rows that do not exist yet. A new row
 * takes the room type's current room_count as total; the FOR SHARE on the room type waits for a concurrent
 * room creation (which raises room_count and the totals of existing rows) so a new row never misses that
 * room. A row another transaction created meanwhile is taken with the same guard as guardedTake (ON CONFLICT
 * waits for that transaction and re-checks the committed row). Returns the dates taken.
 */
async function createAndTake(tx: Queryable, d: RoomDays, skip: string[]): Promise<string[]> {
  const rows = await tx.query<{ date: string }>(
    `insert into room_type_days as d (property_id, room_type_id, date, total, ${d.counter})
     select rt.property_id, rt.id, g.day::date, rt.room_count, $5
       from (select property_id, id, room_count from room_types where property_id = $1 and id = $2 for share) rt
      cross join generate_series($3::date, $4::date - 1, interval '1 day') as g(day)
      where rt.room_count >= $5 and not (to_char(g.day, 'YYYY-MM-DD') = any($6::text[]))
     on conflict (property_id, room_type_id, date) do update set ${d.counter} = d.${d.counter} + $5
      where d.sold + d.blocked + d.out_of_order + $5 <= d.total
     returning to_char(d.date, 'YYYY-MM-DD') as date`,
    [...dayParams(d), skip],
  );
  return rows.map((r) => r.date);
}

/** The refusal of a take: a stay meets a sold-out room type (sold_out), a block or repair a full one (no_availability). */
function refusal(d: RoomDays): AppError {
  return d.counter === "sold"
    ? new AppError("sold_out", "No room of this type is available on every date of the stay.")
    : new AppError("no_availability", "No room of this type is available on every date of the stay.");
}

/**
 * Takes `count` rooms of a type on every date of [from, to) for `counter`, or throws sold_out (counter `sold`) or
 * no_availability (blocks, out of order).
 * The guarded UPDATE locks the day rows in date order; a concurrent taker of the last room waits for the
 * row lock, re-reads the committed row and no longer matches. Only when some dates have no row yet are the
 * rows created and the remaining dates taken (one more statement). On a throw some days may already have
 * been taken: the caller's transaction rolls back (it must not catch and continue). The caller records the
 * change in the ARI feed in the same transaction (cached availability answers are keyed by its sequence).
 */
export async function takeRooms(tx: Queryable, d: RoomDays): Promise<void> {
  const nights = daysBetween(d.from, d.to);
  let taken = await guardedTake(tx, d);
  if (taken.length < nights) taken = taken.concat(await createAndTake(tx, d, taken));
  if (taken.length !== nights) throw refusal(d);
}

/**
 * takeRooms for several stays at once: every guarded UPDATE is sent without waiting for the one before (the pool
 * pipelines them: one round trip for all, locks still taken in the given order, so give them in one order), then
 * the rows still missing are created one stay after the other. Throws like takeRooms.
 */
export async function takeRoomsOfStays(tx: Queryable, stays: readonly RoomDays[]): Promise<void> {
  const taken = await Promise.all(stays.map((d) => guardedTake(tx, d)));
  for (const [i, d] of stays.entries()) {
    const nights = daysBetween(d.from, d.to);
    let dates = taken[i]!;
    if (dates.length < nights) dates = dates.concat(await createAndTake(tx, d, dates));
    if (dates.length !== nights) throw refusal(d);
  }
}

/** The nights a stay holds beyond the room type's rooms: per room type and date, how many rooms short. */
export interface ShortNight {
  roomTypeId: string;
  date: string;
  rooms: number;
}

/**
 * takeRoomsOfStays without the guard, for a booking accepted beyond capacity (an overbooking): every night is
 * taken, and the nights that went over the room type's rooms are recorded against `holderId` (the reservation) in
 * room_type_overbookings. A night's shortfall is what this take added beyond the rooms, so earlier overbookings of
 * the same night keep theirs. Give the stays in one order (room type, then date), as takeRoomsOfStays says.
 */
export async function takeRoomsOverbooking(
  tx: Queryable,
  stays: readonly RoomDays[],
  holderId: string,
  now: Date,
): Promise<ShortNight[]> {
  const short: ShortNight[] = [];
  // sent without waiting for the one before (one round trip; locks still taken in the given order)
  const taken = await Promise.all(
    stays.map((d) =>
      tx.query<{ date: string; over: number }>(
        `insert into room_type_days as d (property_id, room_type_id, date, total, ${d.counter})
       select rt.property_id, rt.id, g.day::date, rt.room_count, $5
         from (select property_id, id, room_count from room_types where property_id = $1 and id = $2 for share) rt
        cross join generate_series($3::date, $4::date - 1, interval '1 day') as g(day)
       on conflict (property_id, room_type_id, date) do update set ${d.counter} = d.${d.counter} + $5
       returning to_char(d.date, 'YYYY-MM-DD') as date, least($5, d.sold + d.blocked + d.out_of_order - d.total) as over`,
        dayParams(d),
      ),
    ),
  );
  for (const [i, d] of stays.entries()) {
    for (const r of taken[i]!) {
      if (r.over <= 0) continue;
      // two lines of one room type: one row per night with both rooms (an INSERT may not touch a row twice)
      const same = short.find((n) => n.roomTypeId === d.roomTypeId && n.date === r.date);
      if (same !== undefined) same.rooms += r.over;
      else short.push({ roomTypeId: d.roomTypeId, date: r.date, rooms: r.over });
    }
  }
  if (short.length > 0) {
    await tx.query(
      `insert into room_type_overbookings as o (property_id, room_type_id, date, holder_id, rooms, created_at)
       select $1, s.room_type_id, s.date, $2, s.rooms, $3
         from unnest($4::uuid[], $5::date[], $6::int[]) as s(room_type_id, date, rooms)
       on conflict (property_id, room_type_id, date, holder_id) do update set rooms = o.rooms + excluded.rooms`,
      [
        stays[0]!.propertyId,
        holderId,
        now,
        short.map((s) => s.roomTypeId),
        short.map((s) => s.date),
        short.map((s) => s.rooms),
      ],
    );
  }
  return short;
}

/**
 * After rooms came back on [from, to) (a release, more rooms): each night's overbooking rows are trimmed to the
 * night's excess (sold + blocked + out_of_order - total), the latest holders kept, the earliest cleared first (the
 * freed room goes to the booking that waited longest). A night no longer over its rooms keeps no row.
 */
async function trimOverbookings(
  tx: Queryable,
  propertyId: string,
  roomTypeId: string,
  from: string,
  to: string | null,
): Promise<void> {
  await tx.query(
    `with o as (
       select o.date, o.holder_id, o.rooms,
              sum(o.rooms) over (partition by o.date order by o.created_at desc, o.holder_id desc) as upto,
              greatest(0, coalesce(d.sold + d.blocked + d.out_of_order - d.total, 0)) as excess
         from room_type_overbookings o
         left join room_type_days d on d.property_id = o.property_id and d.room_type_id = o.room_type_id and d.date = o.date
        where o.property_id = $1 and o.room_type_id = $2 and o.date >= $3 and ($4::date is null or o.date < $4::date)
     ), gone as (
       delete from room_type_overbookings t using o
        where t.property_id = $1 and t.room_type_id = $2 and t.date = o.date and t.holder_id = o.holder_id
          and o.upto - o.rooms >= o.excess
     )
     update room_type_overbookings t set rooms = o.excess - (o.upto - o.rooms) from o
      where t.property_id = $1 and t.room_type_id = $2 and t.date = o.date and t.holder_id = o.holder_id
        and o.upto > o.excess and o.upto - o.rooms < o.excess`,
    [propertyId, roomTypeId, from, to],
  );
}

/**
 * Locks the existing day rows of every stay a change is about to release and take, in one statement and one order
 * (room type, then date), before it moves any. Moving a stay is a release of its old nights and a take of the new
 * ones, two statements: two changes moving stays across each other's dates (one from the 1st to the 4th, the other
 * from the 4th to the 1st) would lock the same rows in opposite orders and deadlock.
 */
export async function lockRoomDays(
  tx: Queryable,
  propertyId: string,
  stays: readonly { roomTypeId: string; from: string; to: string }[],
): Promise<void> {
  if (stays.length === 0) return;
  await tx.query(
    `select 1 from room_type_days d
       join unnest($2::uuid[], $3::date[], $4::date[]) as s(room_type_id, from_date, to_date)
         on d.room_type_id = s.room_type_id and d.date >= s.from_date and d.date < s.to_date
      where d.property_id = $1
      order by d.room_type_id, d.date
      for update of d`,
    [propertyId, stays.map((s) => s.roomTypeId), stays.map((s) => s.from), stays.map((s) => s.to)],
  );
}

/**
 * Gives back rooms taken by `takeRooms` (same counter, dates and count); the caller records it as takeRooms says.
 * `holderId`: the reservation giving back its nights, whose own overbooking rows on them go. The other
 * overbookings of the dates are trimmed to what is still over the rooms (see trimOverbookings), in the same
 * statement: the day rows' new counts come from the UPDATE's RETURNING (one round trip, as before overbookings).
 */
export async function releaseRooms(tx: Queryable, d: RoomDays & { holderId?: string | undefined }): Promise<void> {
  if (d.from >= d.to) return;
  await tx.query(
    `with d as (
       update room_type_days set ${d.counter} = ${d.counter} - $5
        where property_id = $1 and room_type_id = $2 and date >= $3 and date < $4
       returning date, greatest(0, sold + blocked + out_of_order - total) as excess
     ), mine as (
       delete from room_type_overbookings
        where $6::uuid is not null and property_id = $1 and room_type_id = $2 and date >= $3 and date < $4 and holder_id = $6
     ), o as (
       select o.date, o.holder_id, o.rooms, coalesce(d.excess, 0) as excess,
              sum(o.rooms) over (partition by o.date order by o.created_at desc, o.holder_id desc) as upto
         from room_type_overbookings o left join d on d.date = o.date
        where o.property_id = $1 and o.room_type_id = $2 and o.date >= $3 and o.date < $4
          and o.holder_id is distinct from $6::uuid
     ), gone as (
       delete from room_type_overbookings t using o
        where t.property_id = $1 and t.room_type_id = $2 and t.date = o.date and t.holder_id = o.holder_id
          and o.upto - o.rooms >= o.excess
     )
     update room_type_overbookings t set rooms = o.excess - (o.upto - o.rooms) from o
      where t.property_id = $1 and t.room_type_id = $2 and t.date = o.date and t.holder_id = o.holder_id
        and o.upto > o.excess and o.upto - o.rooms < o.excess`,
    [...dayParams(d), d.holderId ?? null],
  );
}

/** One more (or one fewer) room of a type from `fromDate` on: room_count and the totals of existing rows. */
export async function changeRoomCount(
  tx: Queryable,
  propertyId: string,
  roomTypeId: string,
  delta: number,
  fromDate: string,
): Promise<void> {
  await tx.query("update room_types set room_count = room_count + $3 where property_id = $1 and id = $2", [
    propertyId,
    roomTypeId,
    delta,
  ]);
  await tx.query(
    "update room_type_days set total = total + $3 where property_id = $1 and room_type_id = $2 and date >= $4",
    [propertyId, roomTypeId, delta, fromDate],
  );
  if (delta > 0) await trimOverbookings(tx, propertyId, roomTypeId, fromDate, null);
}
