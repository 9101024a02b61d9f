import type { Statement } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import { parseRange } from "../../lib/dates.ts";
import { recordChange } from "../audit/index.ts";
import { recordEvents } from "../events/index.ts";
import { recordAriChanges } from "./ari-log.ts";
import * as repo from "./inventory.repository.ts";

/** Largest availability cap (a room type has at most this many rooms); -1 removes a cap. */
export const maxAvailabilityCap = 9999;
const maxCapDays = 731;

/** One cap over the days of [from, to) on the weekdays of `weekdayMask` (bit d-1 for ISO weekday d). */
export interface CapWrite {
  roomTypeId: string;
  from: string;
  to: string;
  weekdayMask: number;
  /** 0 to maxAvailabilityCap; -1 removes the cap. */
  cap: number;
}

/**
 * Availability caps per room type and day (the later write wins; -1 removes), on the room type's day rows: a day
 * without a row gets one with the room type's rooms as its total, the room type held FOR SHARE as takeRooms does,
 * so a concurrent room creation is not missed. Named (ADR 0004): every capped ARI write runs it. Returns the days.
 */
const capsStatement: Statement = {
  name: "inventory_ari_write_caps",
  text: `with c as (select * from unnest($2::uuid[], $3::date[], $4::date[], $5::int[], $6::int[]) with ordinality as c(rt, f, t, wd, cap, n)),
     cells as (select c.*, d.day::date as day
                 from c cross join lateral generate_series(c.f, c.t - 1, interval '1 day') as d(day)
                where (c.wd >> (extract(isodow from d.day)::int - 1)) & 1 = 1),
     merged as (select rt, day, (array_agg(cap order by n desc))[1] as cap from cells group by rt, day),
     written as (
       insert into room_type_days as d (property_id, room_type_id, date, total, availability_cap)
       select $1, m.rt, m.day, t.room_count, nullif(m.cap, -1)
         from merged m join (select id, room_count from room_types where property_id = $1 for share) t on t.id = m.rt
        order by m.rt, m.day
       on conflict (property_id, room_type_id, date) do update set availability_cap = excluded.availability_cap
       returning 1)
     select count(*)::int as days from written`,
};

/** Writes the caps in the caller's transaction (none: nothing). Returns the room type days written. */
export async function applyCaps(tx: Tx, propertyId: string, caps: readonly CapWrite[]): Promise<number> {
  if (caps.length === 0) return 0;
  const [row] = await tx.query<{ days: number }>(capsStatement, [
    propertyId,
    caps.map((c) => c.roomTypeId),
    caps.map((c) => c.from),
    caps.map((c) => c.to),
    caps.map((c) => c.weekdayMask),
    caps.map((c) => c.cap),
  ]);
  return row?.days ?? 0;
}

export interface SetAvailabilityCapsInput {
  roomTypeIds: readonly string[];
  from: string;
  to: string;
  weekdays: readonly number[];
  availabilityCap: number;
}

/**
 * The hotel's own setting or lifting of availability caps (a partner's allotment overridden or cleared): checked
 * (422 naming the field, 404 for another property's room type), written, audited per room type, with one
 * availability.changed hint and ARI feed entry (reason "allotment") in the caller's transaction. Returns the days.
 */
export async function setAvailabilityCaps(
  tx: Tx,
  propertyId: string,
  input: SetAvailabilityCapsInput,
  now: Date,
): Promise<number> {
  parseRange(input.from, input.to, maxCapDays);
  const cap = input.availabilityCap;
  if (!Number.isInteger(cap) || cap < -1 || cap > maxAvailabilityCap)
    throw invalidField(
      "availabilityCap",
      `0 to ${maxAvailabilityCap} rooms, or -1 to remove the cap`,
      "validation_failed",
    );
  if (input.roomTypeIds.length === 0) throw invalidField("roomTypeIds", "at least one room type");
  for (const d of input.weekdays)
    if (!Number.isInteger(d) || d < 1 || d > 7) throw invalidField("weekdays", "ISO weekdays 1 (Monday) to 7 (Sunday)");
  const codes = new Map((await repo.listRoomTypes(tx, propertyId)).map((rt) => [rt.id, rt.code]));
  const ids = [...new Set(input.roomTypeIds)];
  for (const id of ids) if (!codes.has(id)) throw new AppError("not_found", "Room type not found.");
  const weekdayMask = input.weekdays.length === 0 ? 127 : input.weekdays.reduce((m, d) => m | (1 << (d - 1)), 0);
  const days = await applyCaps(
    tx,
    propertyId,
    ids.map((roomTypeId) => ({ roomTypeId, from: input.from, to: input.to, weekdayMask, cap })),
  );
  for (const id of ids)
    recordChange(tx, {
      propertyId,
      entity: "restriction",
      entityId: id,
      action: "set",
      after: { from: input.from, to: input.to, weekdays: input.weekdays, availabilityCap: cap },
    });
  const roomTypes = ids.map((id) => codes.get(id)!).sort();
  await recordEvents(tx, [
    {
      propertyId,
      type: "availability.changed",
      occurredAt: now,
      data: { from: input.from, to: input.to, toExclusive: true, roomTypes, reason: "allotment" },
    },
  ]);
  await recordAriChanges(
    tx,
    propertyId,
    [{ reason: "allotment", from: input.from, to: input.to, roomTypes, ratePlans: [] }],
    now,
  );
  return days;
}
