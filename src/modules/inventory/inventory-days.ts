import { AppError } from "../../errors.ts";
import { daysBetween } from "./dates.ts";
import type { Queryable } from "./queryable.ts";

/** The counters of a `room_type_days` row that consume rooms. */
export type DayCounter = "sold" | "blocked" | "out_of_order";

/**
 * Creates the missing `room_type_days` rows of [from, to). New rows take the room type's current room_count as
 * total; the FOR SHARE on the room type waits for a concurrent room creation (which raises room_count and the
 * totals of existing rows) so a new row never misses that room.
 */
async function ensureDays(tx: Queryable, propertyId: string, roomTypeId: string, from: string, to: string): Promise<void> {
  await tx.query(
    `insert into room_type_days (property_id, room_type_id, date, total)
     select rt.property_id, rt.id, d.day::date, rt.room_count
       from (select property_id, id, room_count from room_types where property_id = $1 and id = $2 for share) rt
      cross join generate_series($3::date, $4::date - 1, interval '1 day') as d(day)
     on conflict do nothing`,
    [propertyId, roomTypeId, from, to],
  );
}

/** The guarded UPDATE: adds `count` on the dates of [from, to) not in `skip` that still have room. */
async function guardedTake(tx: Queryable, propertyId: string, roomTypeId: string, counter: DayCounter, from: string, to: string, count: number, skip: string[]): Promise<string[]> {
  const rows = await tx.query<{ date: string }>(
    `update room_type_days set ${counter} = ${counter} + $5
      where property_id = $1 and room_type_id = $2 and date >= $3 and date < $4 and sold + blocked + out_of_order + $5 <= total
        and not (to_char(date, 'YYYY-MM-DD') = any($6::text[]))
      returning to_char(date, 'YYYY-MM-DD') as date`,
    [propertyId, roomTypeId, from, to, count, skip],
  );
  return rows.map((r) => r.date);
}

/**
 * Takes `count` rooms of a type on every date of [from, to) for `counter`, or throws no_availability.
 * The guarded UPDATE locks the day rows in date order; a concurrent taker of the last room waits for the
 * row lock, re-reads the committed row and no longer matches. Only when some dates have no row yet are the
 * rows created and the remaining dates taken. On a throw some days may already have been taken: the
 * caller's transaction rolls back (it must not catch and continue).
 */
export async function takeRooms(tx: Queryable, propertyId: string, roomTypeId: string, counter: DayCounter, from: string, to: string, count = 1): Promise<void> {
  const nights = daysBetween(from, to);
  let taken = await guardedTake(tx, propertyId, roomTypeId, counter, from, to, count, []);
  if (taken.length < nights) {
    await ensureDays(tx, propertyId, roomTypeId, from, to);
    taken = taken.concat(await guardedTake(tx, propertyId, roomTypeId, counter, from, to, count, taken));
  }
  if (taken.length !== nights) throw new AppError("no_availability", "No room of this type is available on every date of the stay.");
}

/** Gives back rooms taken by `takeRooms` (same counter, dates and count). */
export async function releaseRooms(tx: Queryable, propertyId: string, roomTypeId: string, counter: DayCounter, from: string, to: string, count = 1): Promise<void> {
  if (from >= to) return;
  await tx.query(
    `update room_type_days set ${counter} = ${counter} - $5 where property_id = $1 and room_type_id = $2 and date >= $3 and date < $4`,
    [propertyId, roomTypeId, from, to, count],
  );
}

/** One more (or one fewer) room of a type from `fromDate` on: room_count and the totals of existing rows. */
export async function changeRoomCount(tx: Queryable, propertyId: string, roomTypeId: string, delta: number, fromDate: string): Promise<void> {
  await tx.query("update room_types set room_count = room_count + $3 where property_id = $1 and id = $2", [propertyId, roomTypeId, delta]);
  await tx.query("update room_type_days set total = total + $3 where property_id = $1 and room_type_id = $2 and date >= $4", [propertyId, roomTypeId, delta, fromDate]);
}

export interface AvailabilityDay {
  date: string;
  total: number;
  sold: number;
  blocked: number;
  outOfOrder: number;
  available: number;
}

export interface RoomTypeAvailability {
  roomTypeId: string;
  code: string;
  days: AvailabilityDay[];
}

interface AvailabilityRow {
  id: string;
  code: string;
  room_count: number;
  // [dayIndex, total, sold, blocked, out_of_order] for each stored day; days without a row are untouched.
  days: [number, number, number, number, number][] | null;
}

/**
 * Availability per room type and date over [from, to): one query, one index range scan over the property's
 * day rows, aggregated per room type in PostgreSQL (JSON arrays parse far faster than thousands of rows).
 */
export async function readAvailability(q: Queryable, propertyId: string, from: string, to: string, roomTypeCodes: readonly string[] = []): Promise<RoomTypeAvailability[]> {
  const rows = await q.query<AvailabilityRow>(
    `select rt.id, rt.code, rt.room_count, d.days
       from room_types rt
       left join (select room_type_id, json_agg(json_build_array(date - $2::date, total, sold, blocked, out_of_order)) as days
                    from room_type_days where property_id = $1 and date >= $2::date and date < $3::date
                   group by room_type_id) d on d.room_type_id = rt.id
      where rt.property_id = $1 and (cardinality($4::text[]) = 0 or rt.code = any($4::text[]))
      order by rt.code`,
    [propertyId, from, to, roomTypeCodes],
  );
  const n = daysBetween(from, to);
  const dates: string[] = [];
  for (let i = 0, t = Date.parse(`${from}T00:00:00Z`); i < n; i++, t += 86_400_000) dates.push(new Date(t).toISOString().slice(0, 10));
  return rows.map((r) => {
    const days: AvailabilityDay[] = dates.map((date) => ({ date, total: r.room_count, sold: 0, blocked: 0, outOfOrder: 0, available: r.room_count }));
    for (const [i, total, sold, blocked, outOfOrder] of r.days ?? []) {
      days[i] = { date: dates[i]!, total, sold, blocked, outOfOrder, available: Math.max(0, total - sold - blocked - outOfOrder) };
    }
    return { roomTypeId: r.id, code: r.code, days };
  });
}
