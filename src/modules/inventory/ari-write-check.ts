import { AppError, type FieldViolation } from "../../errors.ts";
import { badDateReason, daysBetween, isCalendarDate } from "../../lib/dates.ts";
import { maxAvailabilityCap } from "./caps.ts";
import { occupancyViolations, type OccupancyPrice } from "./occupancy-prices.ts";

/** What an ARI write may ask: its changes, their limits and the checks made before anything is written. */

/** Most changes in one ARI write. */
export const maxAriWriteChanges = 1000;
/**
 * Most cells (rate plan x room type x day, counted per change) one ARI write names, as many as one ARI read page:
 * a 500-day full sync of 200 room type x rate plan pairs. A larger sync is several requests.
 */
const maxAriWriteCells = 100_000;
/** Longest range of one change (as for prices and restrictions). */
const maxAriWriteDays = 731;
const maxPriceMinor = 1_000_000_000_000n;

/** One change of an ARI write: a field left undefined keeps its stored value; a stay limit of 0 removes it. */
export interface AriWrite {
  ratePlanId: string;
  roomTypeId: string;
  from: string;
  /** Exclusive. */
  to: string;
  /** ISO weekdays (1 Monday .. 7 Sunday); empty: every day. */
  weekdays: readonly number[];
  /** The day's price; on a plan that prices by occupancy, the price for the room type's max occupancy. */
  priceMinor?: bigint | undefined;
  /**
   * Prices per number of adults, for a plan that prices by occupancy only; the entry for max occupancy is the day's
   * price (not given with priceMinor).
   */
  occupancyPrices?: readonly OccupancyPrice[] | undefined;
  minStay?: number | undefined;
  maxStay?: number | undefined;
  closedToArrival?: boolean | undefined;
  closedToDeparture?: boolean | undefined;
  stopSell?: boolean | undefined;
  /**
   * The most rooms of the room type shown available on the day (every rate plan of it), 0 to maxAvailabilityCap;
   * -1 removes the cap. Only callers the hotel lets manage allotment may set it (the connectivity face checks).
   */
  availabilityCap?: number | undefined;
}

const restrictionFields = ["minStay", "maxStay", "closedToArrival", "closedToDeparture", "stopSell"] as const;
export const hasRestriction = (c: AriWrite) => restrictionFields.some((f) => c[f] !== undefined);
export const hasCap = (c: AriWrite) => c.availabilityCap !== undefined;
export const hasOccupancy = (c: AriWrite) => (c.occupancyPrices ?? []).length > 0;
export const setsPrice = (c: AriWrite) => c.priceMinor !== undefined || hasOccupancy(c);

/** The weekdays of a change as a bit mask (bit d-1 for ISO weekday d); every day when none are named. */
export function weekdayMask(weekdays: readonly number[]): number {
  return weekdays.length === 0 ? 127 : weekdays.reduce((m, d) => m | (1 << (d - 1)), 0);
}

/** Days of [from, to) on the mask's weekdays. */
function daysOn(from: string, days: number, mask: number): number {
  const first = new Date(`${from}T00:00:00Z`).getUTCDay(); // 0 Sunday
  let n = 0;
  for (let i = 0; i < days; i++) if ((mask >> ((first + i + 6) % 7)) & 1) n++;
  return n;
}

/**
 * Every bad field of the changes, named `changes[i].<field>` (nothing about codes: the caller resolved them), and
 * the cells the changes name (counted per change) for the size cap.
 */
function ariWriteViolations(changes: readonly AriWrite[]): { violations: FieldViolation[]; cells: number } {
  const out: FieldViolation[] = [];
  let cells = 0;
  for (const [i, c] of changes.entries()) {
    const bad = (field: string, reason: string) => out.push({ field: `changes[${i}].${field}`, reason });
    let days = 0;
    if (!isCalendarDate(c.from)) bad("from", badDateReason);
    else if (!isCalendarDate(c.to)) bad("to", badDateReason);
    else {
      days = daysBetween(c.from, c.to);
      if (days < 1) bad("to", "must be after from (to is exclusive)");
      else if (days > maxAriWriteDays) bad("to", `at most ${maxAriWriteDays} days after from`);
    }
    const weekdaysOk = c.weekdays.every((d) => Number.isInteger(d) && d >= 1 && d <= 7);
    if (!weekdaysOk) bad("weekdays", "ISO weekdays 1 (Monday) to 7 (Sunday)");
    if (c.priceMinor !== undefined && (c.priceMinor < 0n || c.priceMinor > maxPriceMinor))
      bad("priceMinor", `0 to ${maxPriceMinor} minor units`);
    out.push(...occupancyViolations(`changes[${i}]`, c.occupancyPrices ?? [], maxPriceMinor));
    if (c.priceMinor !== undefined && hasOccupancy(c))
      bad("priceMinor", "not with occupancyPrices: the price for max occupancy is its entry there");
    for (const f of ["minStay", "maxStay"] as const) {
      const v = c[f];
      if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 366)) bad(f, "0 (no limit) to 366 nights");
    }
    if (c.minStay !== undefined && c.maxStay !== undefined && c.minStay > 0 && c.maxStay > 0 && c.minStay > c.maxStay)
      bad("maxStay", "must not be below minStay");
    const cap = c.availabilityCap;
    if (cap !== undefined && (!Number.isInteger(cap) || cap < -1 || cap > maxAvailabilityCap))
      bad("availabilityCap", `0 to ${maxAvailabilityCap} rooms, or -1 to remove the cap`);
    if (!setsPrice(c) && !hasRestriction(c) && !hasCap(c))
      bad(
        "priceMinor",
        "set at least one of priceMinor, occupancyPrices, minStay, maxStay, closedToArrival, closedToDeparture, stopSell, availabilityCap",
      );
    if (days >= 1 && days <= maxAriWriteDays && weekdaysOk) cells += daysOn(c.from, days, weekdayMask(c.weekdays));
  }
  return { violations: out, cells };
}

/** 422 validation_failed naming the bad fields (the first 100 in details, the count in the message). */
export function ariWriteError(violations: readonly FieldViolation[]): AppError {
  const shown = violations.slice(0, 100);
  const more = violations.length > shown.length ? ` (the first ${shown.length} listed)` : "";
  return new AppError(
    "validation_failed",
    `The ARI write has ${violations.length} invalid field${violations.length === 1 ? "" : "s"}${more}; nothing was written.`,
    { details: shown },
  );
}

/**
 * Checks the request as a whole: 1 to maxAriWriteChanges changes and at most maxAriWriteCells cells, every field
 * valid. Throws 422 with every bad field; nothing has been written.
 */
export function checkAriWrite(changes: readonly AriWrite[]): void {
  if (changes.length === 0 || changes.length > maxAriWriteChanges)
    throw ariWriteError([{ field: "changes", reason: `1 to ${maxAriWriteChanges} changes` }]);
  const { violations, cells } = ariWriteViolations(changes);
  if (violations.length > 0) throw ariWriteError(violations);
  if (cells > maxAriWriteCells)
    throw ariWriteError([
      {
        field: "changes",
        reason: `at most ${maxAriWriteCells} cells (rate plan x room type x day); these name ${cells}`,
      },
    ]);
}
