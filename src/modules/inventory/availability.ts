import { daysBetween } from "../../lib/dates.ts";
import { concurrencyLimit } from "../../lib/limit.ts";
import type { Queryable } from "../../db/queryable.ts";

/** Availability reads: the room type day rows (written by inventory-days.ts) per room type and date. */

interface AvailabilityDay {
  date: string;
  total: number;
  sold: number;
  blocked: number;
  outOfOrder: number;
  /**
   * Rooms free to sell: total - sold - blocked - outOfOrder, never negative, and at most the availability cap when
   * a partner managing allotment set one.
   */
  available: number;
  /** The availability cap of the day (ARI write, scope allotment.write); absent: none. */
  availabilityCap?: number;
  /** Rooms held beyond the total (an overbooking): sold + blocked + outOfOrder - total, never negative. */
  overbooked: number;
}

export interface RoomTypeAvailability {
  roomTypeId: string;
  code: string;
  days: AvailabilityDay[];
}

/** What every availability answer of a property depends on besides its day rows, with the version of those rows. */
export interface AvailabilityHead {
  /**
   * The property's ARI sequence (ari_counters; "0" before the first change). Every write of `room_type_days`
   * (takeRooms, releaseRooms, changeRoomCount) records an ARI change in the same transaction (the ARI delta feed
   * promises partners every change of availability), so the day rows of one sequence number are always the same.
   */
  seq: string;
  /** The room types by code: their ids, codes and room counts are the rest of what an answer reads. */
  roomTypes: { id: string; code: string; room_count: number }[];
}

/** The room types and the ARI sequence in one statement (one snapshot): the version of availability answers. */
export async function availabilityHead(q: Queryable, propertyId: string): Promise<AvailabilityHead> {
  const rows = await q.query<{ seq: string; id: string | null; code: string; room_count: number }>(
    `select coalesce((select seq from ari_counters where property_id = $1), 0)::text as seq, rt.id, rt.code, rt.room_count
       from (select 1) one left join room_types rt on rt.property_id = $1
      order by rt.code`,
    [propertyId],
  );
  return {
    seq: rows[0]?.seq ?? "0",
    roomTypes: rows.filter((r) => r.id !== null) as AvailabilityHead["roomTypes"],
  };
}

interface AvailabilityRow {
  id: string;
  code: string;
  room_count: number;
  /**
   * The room type's stored days of the range as a two-dimensional int array in PostgreSQL's text form,
   * `{{dayIndex,total,sold,blocked,outOfOrder,cap},...}` in no particular order (cap -1: none). Null: no stored day.
   */
  days: string | null;
}

/**
 * Availability per room type and date over [from, to): one query, per room type one range scan of the primary
 * key (property_id, room_type_id, date). Each room type's days come back as one int array in text form, which
 * JSON.parse reads far faster than node-postgres parses thousands of rows or PostgreSQL builds JSON; each day
 * carries its own index, so nothing depends on aggregation order. Dates without a stored row have
 * total = room_count and nothing taken.
 *
 * Two reads at a time per process, the others wait in line: a caller answers right after its read (Connect and gRPC
 * build the whole message), so what concurrent reads of whole years hold stays bounded.
 */
export function readAvailability(
  q: Queryable,
  propertyId: string,
  from: string,
  to: string,
  roomTypeCodes: readonly string[] = [],
): Promise<RoomTypeAvailability[]> {
  return availabilityReads(() => readAvailabilityNow(q, propertyId, from, to, roomTypeCodes));
}

const availabilityReads = concurrencyLimit(2);

async function readAvailabilityNow(
  q: Queryable,
  propertyId: string,
  from: string,
  to: string,
  roomTypeCodes: readonly string[],
): Promise<RoomTypeAvailability[]> {
  const rows = await q.query<AvailabilityRow>(
    `select rt.id, rt.code, rt.room_count, d.days::text as days
       from room_types rt
       left join lateral (select array_agg(array[date - $2::date, total, sold, blocked, out_of_order, coalesce(availability_cap, -1)]) as days
                            from room_type_days
                           where property_id = rt.property_id and room_type_id = rt.id and date >= $2::date and date < $3::date) d on true
      where rt.property_id = $1 and (cardinality($4::text[]) = 0 or rt.code = any($4::text[]))
      order by rt.code`,
    [propertyId, from, to, roomTypeCodes],
  );
  const n = daysBetween(from, to);
  const dates: string[] = [];
  for (let i = 0, t = Date.parse(`${from}T00:00:00Z`); i < n; i++, t += 86_400_000)
    dates.push(new Date(t).toISOString().slice(0, 10));
  return rows.map((r) => {
    const days = new Array<AvailabilityDay>(n);
    const v = r.days === null ? [] : (JSON.parse(`[${r.days.replace(/[{}]/g, "")}]`) as number[]);
    for (let k = 0; k < v.length; k += 6) {
      const i = v[k]!;
      const total = v[k + 1]!;
      const sold = v[k + 2]!;
      const blocked = v[k + 3]!;
      const outOfOrder = v[k + 4]!;
      const cap = v[k + 5]!;
      const free = Math.max(0, total - sold - blocked - outOfOrder);
      days[i] = {
        date: dates[i]!,
        total,
        sold,
        blocked,
        outOfOrder,
        available: cap < 0 ? free : Math.min(free, cap),
        overbooked: Math.max(0, sold + blocked + outOfOrder - total),
        ...(cap < 0 ? {} : { availabilityCap: cap }),
      };
    }
    for (let i = 0; i < n; i++)
      days[i] ??= {
        date: dates[i]!,
        total: r.room_count,
        sold: 0,
        blocked: 0,
        outOfOrder: 0,
        available: r.room_count,
        overbooked: 0,
      };
    return { roomTypeId: r.id, code: r.code, days };
  });
}
