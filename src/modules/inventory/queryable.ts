import type pg from "pg";
import { AppError } from "../../errors.ts";
import { isUuid } from "../../lib/ids.ts";

/** What repositories run SQL on: a transaction (`Tx`) or the plain read pool. `$1` placeholders. */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

export function poolQueryable(pool: pg.Pool): Queryable {
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      return (await pool.query(text, [...params])).rows as R[];
    },
  };
}

/** Ids arrive as text; a malformed id cannot name a record, so it is 404 like any unknown id. */
export function requireId(value: string, what: string): string {
  if (!isUuid(value)) throw new AppError("not_found", `${what} not found.`);
  return value;
}

export interface PropertyRow {
  id: string;
  code: string;
  currency: string;
  amountScale: number;
  businessDate: string;
}

const propertySql = `select id, code, currency, amount_scale as "amountScale", to_char(business_date, 'YYYY-MM-DD') as "businessDate"
  from properties where active`;

export async function propertyById(q: Queryable, propertyId: string): Promise<PropertyRow> {
  const [row] = await q.query<PropertyRow>(`${propertySql} and id = $1`, [propertyId]);
  if (row === undefined) throw new AppError("not_found", "Property not found.");
  return row;
}

/** A unique violation (a taken code or number) as the caller's conflict, with a message that says which. */
export async function conflictOnDuplicate<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const code = (err as { code?: unknown; cause?: { code?: unknown } }).code ?? (err as { cause?: { code?: unknown } }).cause?.code;
    if (code === "23505") throw new AppError("conflict", message, { cause: err });
    throw err;
  }
}
