import { AppError, invalidField, type FieldViolation } from "../../errors.ts";
import { daysBetween, parseRange } from "../../lib/dates.ts";
import type { Queryable } from "../../db/queryable.ts";
import { lockRates } from "./rate-lock.ts";

/** Longest range one SetRestrictions call writes (as for prices). */
const maxRestrictionDays = 731;

/** What a SetRestrictions call changes; an absent field keeps the stored value. A stay limit of 0 clears it. */
interface RestrictionValues {
  minStay?: number | undefined;
  maxStay?: number | undefined;
  closedToArrival?: boolean | undefined;
  closedToDeparture?: boolean | undefined;
  stopSell?: boolean | undefined;
}

export interface SetRestrictionsInput extends RestrictionValues {
  ratePlanIds: readonly string[];
  /** Empty: every room type each rate plan covers. */
  roomTypeIds: readonly string[];
  from: string;
  to: string;
  /** ISO weekdays (1 Monday .. 7 Sunday) to write; empty: every day of the range. */
  weekdays: readonly number[];
}

export function checkRestrictionInput(input: SetRestrictionsInput): number[] {
  parseRange(input.from, input.to, maxRestrictionDays);
  if (input.ratePlanIds.length === 0) throw invalidField("ratePlanIds", "at least one rate plan");
  for (const [field, v] of [
    ["minStay", input.minStay],
    ["maxStay", input.maxStay],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 366))
      throw invalidField(field, "0 (no limit) to 366 nights");
  }
  if (
    input.minStay !== undefined &&
    input.maxStay !== undefined &&
    input.minStay > 0 &&
    input.maxStay > 0 &&
    input.minStay > input.maxStay
  ) {
    throw invalidField("maxStay", "must not be below minStay", "validation_failed");
  }
  const weekdays = [...new Set(input.weekdays)];
  for (const d of weekdays)
    if (!Number.isInteger(d) || d < 1 || d > 7) throw invalidField("weekdays", "ISO weekdays 1 (Monday) to 7 (Sunday)");
  const values = [input.minStay, input.maxStay, input.closedToArrival, input.closedToDeparture, input.stopSell];
  if (values.every((v) => v === undefined)) throw invalidField("minStay", "set at least one restriction field");
  return weekdays.length === 0 ? [1, 2, 3, 4, 5, 6, 7] : weekdays;
}

/**
 * Upserts the given restriction fields for every (rate plan, room type) pair and every selected weekday of
 * [from, to) in one statement; other fields of existing rows stay. Returns the number of cells written.
 */
export async function upsertRestrictions(
  q: Queryable,
  propertyId: string,
  pairs: readonly { ratePlanId: string; roomTypeId: string }[],
  input: SetRestrictionsInput,
  weekdays: number[],
): Promise<number> {
  const stay = (v: number | undefined) => (v === undefined || v === 0 ? null : v);
  // the lock and the write leave together (pipelined); the write runs after the lock, in a statement of its own
  const [, rows] = await Promise.all([
    lockRates(q, propertyId),
    q.query(
      `insert into rate_restrictions as r (property_id, rate_plan_id, room_type_id, date, min_stay, max_stay, closed_to_arrival, closed_to_departure, stop_sell)
     select $1, p.rp, p.rt, d.day::date, $7::int, $9::int, coalesce($10::boolean, false), coalesce($11::boolean, false), coalesce($12::boolean, false)
       from unnest($2::uuid[], $3::uuid[]) as p(rp, rt)
      cross join generate_series($4::date, $5::date - 1, interval '1 day') as d(day)
      where extract(isodow from d.day)::int = any($13::int[])
     on conflict (property_id, rate_plan_id, room_type_id, date) do update set
       min_stay = case when $6::boolean then excluded.min_stay else r.min_stay end,
       max_stay = case when $8::boolean then excluded.max_stay else r.max_stay end,
       closed_to_arrival = coalesce($10::boolean, r.closed_to_arrival),
       closed_to_departure = coalesce($11::boolean, r.closed_to_departure),
       stop_sell = coalesce($12::boolean, r.stop_sell)
     returning 1`,
      [
        propertyId,
        pairs.map((p) => p.ratePlanId),
        pairs.map((p) => p.roomTypeId),
        input.from,
        input.to,
        input.minStay !== undefined,
        stay(input.minStay),
        input.maxStay !== undefined,
        stay(input.maxStay),
        input.closedToArrival ?? null,
        input.closedToDeparture ?? null,
        input.stopSell ?? null,
        weekdays,
      ],
    ),
  ]);
  return rows.length;
}

export interface StayLine {
  roomTypeId: string;
  ratePlanId: string;
  roomTypeCode: string;
  ratePlanCode: string;
}

export interface RestrictionRow {
  rp: string;
  rt: string;
  date: string;
  min_stay: number | null;
  max_stay: number | null;
  closed_to_arrival: boolean;
  closed_to_departure: boolean;
  stop_sell: boolean;
}

/** Restrictions a stay breaks: closures (stop sell, closed to arrival/departure) and length-of-stay limits. */
export interface StayViolations {
  closed: FieldViolation[];
  length: FieldViolation[];
}

/**
 * The restrictions a stay [arrival, departure) breaks on each (room type, rate plan) line: stop sell on any night,
 * closed to arrival on the arrival date (only when `arrivalIsNew`: an in-house guest's arrival is history),
 * closed to departure on the departure date, and the minimum/maximum stay of the arrival date.
 */
export async function stayViolations(
  q: Queryable,
  propertyId: string,
  lines: readonly StayLine[],
  arrival: string,
  departure: string,
  arrivalIsNew = true,
): Promise<StayViolations> {
  const rows = await q.query<RestrictionRow>(
    `select r.rate_plan_id as rp, r.room_type_id as rt, to_char(r.date, 'YYYY-MM-DD') as date, r.min_stay, r.max_stay, r.closed_to_arrival, r.closed_to_departure, r.stop_sell
       from rate_restrictions r join unnest($2::uuid[], $3::uuid[]) as l(rp, rt) on r.rate_plan_id = l.rp and r.room_type_id = l.rt
      where r.property_id = $1 and r.date >= $4::date and r.date <= $5::date`,
    [propertyId, lines.map((l) => l.ratePlanId), lines.map((l) => l.roomTypeId), arrival, departure],
  );
  return violationsOf(rows, lines, arrival, departure, arrivalIsNew);
}

/**
 * The restriction rows of (rate plan `rp`, room type `rt`) on the days [arrival, departure] as a JSON array of
 * RestrictionRow, for a column of the caller's statement (quoteStay reads them with the prices in one statement).
 */
export function restrictionRowsSql(propertyId: string, rp: string, rt: string, arrival: string, departure: string) {
  return `coalesce((select json_agg(json_build_object('rp', r.rate_plan_id, 'rt', r.room_type_id, 'date', to_char(r.date, 'YYYY-MM-DD'),
            'min_stay', r.min_stay, 'max_stay', r.max_stay, 'closed_to_arrival', r.closed_to_arrival,
            'closed_to_departure', r.closed_to_departure, 'stop_sell', r.stop_sell))
       from rate_restrictions r
      where r.property_id = ${propertyId} and r.rate_plan_id = ${rp} and r.room_type_id = ${rt}
        and r.date >= ${arrival} and r.date <= ${departure}), '[]')`;
}

/** stayViolations over restriction rows already read (every row of the lines' pairs on [arrival, departure]). */
export function violationsOf(
  rows: readonly RestrictionRow[],
  lines: readonly StayLine[],
  arrival: string,
  departure: string,
  arrivalIsNew = true,
): StayViolations {
  const nights = daysBetween(arrival, departure);
  const out: StayViolations = { closed: [], length: [] };
  const seen = new Set<string>();
  for (const [i, line] of lines.entries()) {
    const key = `${line.ratePlanId}|${line.roomTypeId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const field = `rooms[${i}]`;
    const what = `${line.roomTypeCode}/${line.ratePlanCode}`;
    const mine = rows.filter((r) => r.rp === line.ratePlanId && r.rt === line.roomTypeId);
    const stopped = mine
      .filter((r) => r.stop_sell && r.date < departure)
      .map((r) => r.date)
      .sort();
    if (stopped.length > 0)
      out.closed.push({ field, reason: `stop_sell: ${what} is not sold on ${stopped.join(", ")}` });
    const onArrival = mine.find((r) => r.date === arrival);
    const onDeparture = mine.find((r) => r.date === departure);
    if (arrivalIsNew && onArrival?.closed_to_arrival === true)
      out.closed.push({ field: "arrivalDate", reason: `closed_to_arrival: ${what} takes no arrival on ${arrival}` });
    if (onDeparture?.closed_to_departure === true)
      out.closed.push({
        field: "departureDate",
        reason: `closed_to_departure: ${what} takes no departure on ${departure}`,
      });
    if (onArrival?.min_stay != null && nights < onArrival.min_stay)
      out.length.push({
        field: "departureDate",
        reason: `min_stay: ${what} arriving ${arrival} needs at least ${onArrival.min_stay} nights`,
      });
    if (onArrival?.max_stay != null && nights > onArrival.max_stay)
      out.length.push({
        field: "departureDate",
        reason: `max_stay: ${what} arriving ${arrival} allows at most ${onArrival.max_stay} nights`,
      });
  }
  return out;
}

/** A stay a restriction forbids: 409 `restricted` for closures, else 422 `validation_failed` for stay limits. */
export function restrictionError(v: StayViolations): AppError | undefined {
  const all = [...v.closed, ...v.length];
  if (all.length === 0) return undefined;
  const message = `The stay breaks a restriction: ${all.map((d) => d.reason).join("; ")}.`;
  return new AppError(v.closed.length > 0 ? "restricted" : "validation_failed", message, { details: all });
}
