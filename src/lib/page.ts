import { invalidField } from "../errors.ts";
import { isCalendarDate } from "./dates.ts";
import { isUuid } from "./ids.ts";

/**
 * Keyset pages of a list ordered newest first by (created_at, id): an opaque cursor naming the last row of the
 * previous page, and a limit checked against the list's documented maximum (0 or absent: the default).
 */
export interface Page {
  limit: number;
  after: { at: Date; id: string } | undefined;
}

export function pageOf(input: { cursor?: string; limit?: number }, bounds: { default: number; max: number }): Page {
  const limit = input.limit === undefined || input.limit === 0 ? bounds.default : input.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > bounds.max)
    throw invalidField("limit", `must be from 1 to ${bounds.max}`);
  return { limit, after: input.cursor ? decodePageCursor(input.cursor) : undefined };
}

/** The page's rows and the cursor of the next one (empty on the last page); `rows` holds up to limit + 1. */
export function pageResult<T extends { createdAt: Date; id: string }>(
  rows: readonly T[],
  limit: number,
): { items: T[]; nextCursor: string } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor =
    rows.length > limit && last !== undefined
      ? Buffer.from(`${last.createdAt.toISOString()}|${last.id}`).toString("base64url")
      : "";
  return { items, nextCursor };
}

/** The row a cursor of pageResult names; 400 invalid_argument (field `cursor`) for anything else. */
export function decodePageCursor(cursor: string): { at: Date; id: string } {
  const [at, id, extra] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const date = new Date(at ?? "");
  if (id === undefined || id === "" || extra !== undefined || Number.isNaN(date.getTime()))
    throw invalidField("cursor", "not a cursor of this list");
  return { at: date, id };
}

/**
 * Keyset pages of a list in a fixed order of its own (by code, by number, ...): the cursor names the sort key of the
 * previous page's last row, and the next page starts after it (a row added or removed meanwhile moves nothing else).
 */
export interface KeyPage {
  limit: number;
  /** The sort key of the previous page's last row (the repository compares it in SQL, as it orders). */
  after: string[] | undefined;
}

/**
 * What each element of a list's sort key is, checked when a cursor is read: a cursor whose key does not fit (a
 * forged or foreign one) is a 400 invalid_argument on `cursor`, never a database cast error. `text`: any string;
 * `date`: a calendar day (YYYY-MM-DD); `uuid`: an id.
 */
export type KeyPart = "text" | "date" | "uuid";

const fits: Record<KeyPart, (value: string) => boolean> = {
  text: () => true,
  date: isCalendarDate,
  uuid: isUuid,
};

export function keyPageOf(input: { cursor?: string; limit?: number }, max: number, key: readonly KeyPart[]): KeyPage {
  const limit = input.limit === undefined || input.limit === 0 ? max : input.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw invalidField("limit", `must be from 1 to ${max}`);
  if (!input.cursor) return { limit, after: undefined };
  let after: unknown;
  try {
    after = JSON.parse(Buffer.from(input.cursor, "base64url").toString("utf8"));
  } catch {
    after = undefined;
  }
  if (!isKey(after, key)) throw invalidField("cursor", "not a cursor of this list");
  return { limit, after };
}

function isKey(value: unknown, key: readonly KeyPart[]): value is string[] {
  return (
    Array.isArray(value) &&
    value.length === key.length &&
    value.every((v, i) => typeof v === "string" && fits[key[i]!](v))
  );
}

/** The page's rows (`rows` holds up to limit + 1) and the cursor of the next one (empty on the last page). */
export function keyPageResult<T>(
  rows: readonly T[],
  limit: number,
  keyOf: (row: T) => string[],
): { items: T[]; nextCursor: string } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor =
    rows.length > limit && last !== undefined ? Buffer.from(JSON.stringify(keyOf(last))).toString("base64url") : "";
  return { items, nextCursor };
}
