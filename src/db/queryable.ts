import { AppError } from "../errors.ts";
import type pg from "pg";

/**
 * The one way to run SQL in this service: PostgreSQL text with `$1, $2` placeholders, rows typed by the caller.
 * A transaction (`Tx`) and the database (`Database`) both are one. Types as node-postgres returns them on our
 * pool: timestamptz -> Date, bigint (money, counters) -> string (read it with `BigInt(...)`), `date` columns are
 * selected as `to_char(..., 'YYYY-MM-DD')` text (a business date is a calendar day, not an instant).
 */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/** SQL to run inside another statement: its WITH items and their parameters (numbered where the caller says). */
export interface SqlPart {
  with: string;
  params: unknown[];
}

/** The pool as a Queryable: each statement on whichever pooled connection is free (no transaction). */
export function poolQueryable(pool: pg.Pool): Queryable {
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      return (await pool.query(text, [...params])).rows as R[];
    },
  };
}

/** A unique violation (a taken code or number) as the caller's conflict, with a message that says which. */
export async function conflictOnDuplicate<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const code =
      (err as { code?: unknown; cause?: { code?: unknown } }).code ??
      (err as { cause?: { code?: unknown } }).cause?.code;
    if (code === "23505") throw new AppError("conflict", message, { cause: err });
    throw err;
  }
}
