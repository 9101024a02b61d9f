import { invalidField } from "../errors.ts";

// Calendar dates (`YYYY-MM-DD`, a day, not an instant): the one validation of a date the API receives.
const datePattern = /^\d{4}-\d{2}-\d{2}$/;
const dayMs = 86_400_000;

/** Whether `value` is a real `YYYY-MM-DD` calendar day (no 2026-02-30, no 2026-1-01). */
export function isCalendarDate(value: string): boolean {
  if (!datePattern.test(value)) return false;
  const d = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/** The reason every bad date gets, under its field (400 / INVALID_ARGUMENT on every face). */
export const badDateReason = "must be a date YYYY-MM-DD";

/** Validates a `YYYY-MM-DD` calendar date; a bad one is `invalid_argument` on `field`. */
export function parseDate(field: string, value: string): string {
  if (!isCalendarDate(value)) throw invalidField(field, badDateReason);
  return value;
}

/** A date range [from, to) of at least one and at most `maxDays` days. */
export function parseRange(
  from: string,
  to: string,
  maxDays: number,
  names: [string, string] = ["from", "to"],
): { from: string; to: string; days: number } {
  parseDate(names[0], from);
  parseDate(names[1], to);
  const days = daysBetween(from, to);
  if (days < 1) throw invalidField(names[1], `must be after ${names[0]}`);
  if (days > maxDays) throw invalidField(names[1], `at most ${maxDays} days after ${names[0]}`);
  return { from, to, days };
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / dayMs);
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * dayMs).toISOString().slice(0, 10);
}

export function maxDate(a: string, b: string): string {
  return a > b ? a : b;
}

export function minDate(a: string, b: string): string {
  return a < b ? a : b;
}
