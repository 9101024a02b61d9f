import type { Queryable } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { addDays } from "../../lib/dates.ts";
import { recordEvent } from "../events/index.ts";
import { recordAriChanges } from "./ari-log.ts";

/**
 * The inventory invariant, checked and repaired: for every room type and day of a property, the day row's counters
 * equal what the stays, blocks and out-of-order periods hold. `sold` counts the room nights the stays hold
 * (overbookings included; the reservations module gives them as a row source, `heldNights`), `blocked` the rooms of
 * the room blocks, `out_of_order` the periods of the type's rooms, each counted once; from the business date on,
 * `total` is the type's room count (earlier days keep the rooms they had); and the overbooking rows of a day add up
 * to its excess over the total, each held by a stay that holds that night.
 */

type DriftCounter = "total" | "sold" | "blocked" | "out_of_order" | "overbooked" | "overbooking_holder";

export interface InventoryDrift {
  roomTypeId: string;
  roomTypeCode: string;
  date: string;
  counter: DriftCounter;
  stored: number;
  expected: number;
  /** For `overbooking_holder`: the reservation an overbooking row names that holds no room of the type that night. */
  holderId?: string;
}

/**
 * The expected counters and the stored ones per room type and day, as WITH items (`cmp`, `orphans`) of a statement
 * whose $1 is the property and $2 the business date.
 */
function driftWith(heldNights: string): string {
  return `held as materialized (select h.holder_id, h.holder_created_at, h.room_type_id, h.date from (${heldNights}) h),
  expected as (
    select room_type_id, date, sum(s)::int as sold, sum(b)::int as blocked, sum(o)::int as ooo from (
      select room_type_id, date, 1 as s, 0 as b, 0 as o from held
      union all
      select b.room_type_id, g::date, 0, b.count, 0
        from room_blocks b cross join generate_series(b.from_date, b.to_date - 1, interval '1 day') g
       where b.property_id = $1
      union all
      select rm.room_type_id, g::date, 0, 0, 1
        from room_out_of_order p join rooms rm on rm.property_id = p.property_id and rm.id = p.room_id
       cross join generate_series(p.from_date, p.to_date - 1, interval '1 day') g
       where p.property_id = $1) x
    group by room_type_id, date),
  obk as (select room_type_id, date, sum(rooms)::int as rooms from room_type_overbookings where property_id = $1 group by room_type_id, date),
  keys as (
    select room_type_id, date from room_type_days where property_id = $1
    union select room_type_id, date from expected
    union select room_type_id, date from obk),
  cmp as (
    select k.room_type_id, rt.code, k.date, rt.room_count,
           d.total as stored_total, coalesce(d.sold, 0) as stored_sold, coalesce(d.blocked, 0) as stored_blocked,
           coalesce(d.out_of_order, 0) as stored_ooo, coalesce(o.rooms, 0) as stored_obk,
           case when k.date >= $2::date or d.total is null then rt.room_count else d.total end as total,
           coalesce(e.sold, 0) as sold, coalesce(e.blocked, 0) as blocked, coalesce(e.ooo, 0) as ooo
      from keys k
      join room_types rt on rt.property_id = $1 and rt.id = k.room_type_id
      left join room_type_days d on d.property_id = $1 and d.room_type_id = k.room_type_id and d.date = k.date
      left join expected e on e.room_type_id = k.room_type_id and e.date = k.date
      left join obk o on o.room_type_id = k.room_type_id and o.date = k.date),
  orphans as (
    select o.room_type_id, o.date, o.holder_id, o.rooms
      from room_type_overbookings o
     where o.property_id = $1
       and not exists (select 1 from held h where h.holder_id = o.holder_id and h.room_type_id = o.room_type_id and h.date = o.date))`;
}

interface DriftRow {
  room_type_id: string;
  code: string;
  date: string;
  counter: DriftCounter;
  stored: number;
  expected: number;
  holder_id: string | null;
}

/** Every difference between the stored counters and the expected ones, in room type code, date, counter order. */
export async function findInventoryDrift(
  q: Queryable,
  propertyId: string,
  businessDate: string,
  heldNights: string,
): Promise<InventoryDrift[]> {
  const rows = await q.query<DriftRow>(
    `with ${driftWith(heldNights)}
     select c.room_type_id, c.code, to_char(c.date, 'YYYY-MM-DD') as date, v.counter, v.stored, v.expected, null as holder_id
       from cmp c
      cross join lateral (values
        ('total', coalesce(c.stored_total, c.room_count), c.total),
        ('sold', c.stored_sold, c.sold),
        ('blocked', c.stored_blocked, c.blocked),
        ('out_of_order', c.stored_ooo, c.ooo),
        ('overbooked', c.stored_obk, greatest(0, c.sold + c.blocked + c.ooo - c.total))) v(counter, stored, expected)
      where v.stored <> v.expected
     union all
     select o.room_type_id, rt.code, to_char(o.date, 'YYYY-MM-DD'), 'overbooking_holder', o.rooms, 0, o.holder_id
       from orphans o join room_types rt on rt.property_id = $1 and rt.id = o.room_type_id
      order by 2, 3, 4`,
    [propertyId, businessDate],
  );
  return rows.map((r) => ({
    roomTypeId: r.room_type_id,
    roomTypeCode: r.code,
    date: r.date,
    counter: r.counter,
    stored: r.stored,
    expected: r.expected,
    ...(r.holder_id === null ? {} : { holderId: r.holder_id }),
  }));
}

/**
 * Finds the drift and sets the counters to what they should be, in the caller's transaction: the property's day
 * rows are locked first (bookings of the property wait), the drift found again under the lock, the day rows
 * written, overbooking rows of stays that no longer hold the night removed, each day's rows trimmed (latest
 * holders first) or topped up (by the latest stay holding the night) to its excess, and the repaired days recorded
 * as one ARI change and `availability.changed` hint per room type (reason `inventory`). Returns what was repaired.
 */
export async function repairInventoryDrift(
  tx: Tx,
  propertyId: string,
  businessDate: string,
  heldNights: string,
  now: Date,
): Promise<InventoryDrift[]> {
  await tx.query("select 1 from room_type_days where property_id = $1 order by room_type_id, date for update", [
    propertyId,
  ]);
  const drift = await findInventoryDrift(tx, propertyId, businessDate, heldNights);
  if (drift.length === 0) return drift;
  await tx.query(
    `with ${driftWith(heldNights)},
     fixed as (
       insert into room_type_days as d (property_id, room_type_id, date, total, sold, blocked, out_of_order)
       select $1, c.room_type_id, c.date, c.total, c.sold, c.blocked, c.ooo from cmp c
        where coalesce(c.stored_total, c.room_count) <> c.total or c.stored_sold <> c.sold
           or c.stored_blocked <> c.blocked or c.stored_ooo <> c.ooo
       on conflict (property_id, room_type_id, date) do update
         set total = excluded.total, sold = excluded.sold, blocked = excluded.blocked, out_of_order = excluded.out_of_order
       returning 1),
     gone as (
       delete from room_type_overbookings t using orphans o
        where t.property_id = $1 and t.room_type_id = o.room_type_id and t.date = o.date and t.holder_id = o.holder_id
       returning 1)
     select (select count(*) from fixed) + (select count(*) from gone) as n`,
    [propertyId, businessDate],
  );
  // each day's overbooking rows to its excess: trimmed latest holder first, or the shortfall given to the latest
  // stay holding the night (the booking that went over)
  await tx.query(
    `with ${driftWith(heldNights)},
     want as (select room_type_id, date, greatest(0, sold + blocked + ooo - total) as excess from cmp),
     ranked as (
       select o.room_type_id, o.date, o.holder_id, o.rooms, w.excess,
              sum(o.rooms) over (partition by o.room_type_id, o.date order by o.created_at desc, o.holder_id desc) as upto
         from room_type_overbookings o join want w on w.room_type_id = o.room_type_id and w.date = o.date
        where o.property_id = $1),
     trimmed as (
       delete from room_type_overbookings t using ranked r
        where t.property_id = $1 and t.room_type_id = r.room_type_id and t.date = r.date and t.holder_id = r.holder_id
          and r.upto - r.rooms >= r.excess
       returning 1),
     cut as (
       update room_type_overbookings t set rooms = r.excess - (r.upto - r.rooms) from ranked r
        where t.property_id = $1 and t.room_type_id = r.room_type_id and t.date = r.date and t.holder_id = r.holder_id
          and r.upto > r.excess and r.upto - r.rooms < r.excess
       returning 1),
     short as (
       select w.room_type_id, w.date, w.excess - coalesce((select sum(o.rooms) from room_type_overbookings o
                where o.property_id = $1 and o.room_type_id = w.room_type_id and o.date = w.date), 0) as missing
         from want w),
     latest as (
       select distinct on (s.room_type_id, s.date) s.room_type_id, s.date, s.missing, h.holder_id
         from short s join held h on h.room_type_id = s.room_type_id and h.date = s.date
        where s.missing > 0
        order by s.room_type_id, s.date, h.holder_created_at desc, h.holder_id desc)
     insert into room_type_overbookings as o (property_id, room_type_id, date, holder_id, rooms, created_at)
     select $1, l.room_type_id, l.date, l.holder_id, l.missing, $3 from latest l
     on conflict (property_id, room_type_id, date, holder_id) do update set rooms = o.rooms + excluded.rooms`,
    [propertyId, businessDate, now],
  );
  const ranges = new Map<string, { from: string; to: string }>();
  for (const d of drift) {
    const r = ranges.get(d.roomTypeCode);
    const next = addDays(d.date, 1);
    if (r === undefined) ranges.set(d.roomTypeCode, { from: d.date, to: next });
    else ranges.set(d.roomTypeCode, { from: d.date < r.from ? d.date : r.from, to: next > r.to ? next : r.to });
  }
  for (const [code, r] of ranges)
    await recordEvent(tx, {
      propertyId,
      type: "availability.changed",
      occurredAt: now,
      data: { from: r.from, to: r.to, toExclusive: true, roomTypes: [code], reason: "inventory" },
    });
  await recordAriChanges(
    tx,
    propertyId,
    [...ranges].map(([code, r]) => ({ reason: "inventory" as const, ...r, roomTypes: [code], ratePlans: [] })),
    now,
  );
  return drift;
}
