import { invalidField } from "../errors.ts";

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
