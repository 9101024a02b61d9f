import { invalidField } from "../../errors.ts";

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
const dayMs = 86_400_000;

/** Validates a `YYYY-MM-DD` calendar date (a real day: no 2026-02-30). */
export function parseDate(field: string, value: string): string {
  if (!datePattern.test(value)) throw invalidField(field, "must be a date YYYY-MM-DD");
  const d = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value)
    throw invalidField(field, "is not a calendar date");
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
