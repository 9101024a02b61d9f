import { AppError } from "../../errors.ts";
import type { Queryable } from "../../db/queryable.ts";

/** A property as the operational modules use it: money settings, tax rates and today's business date. */
export interface PropertyRow {
  id: string;
  code: string;
  currency: string;
  amountScale: number;
  vatRateBp: number;
  accommodationTaxRateBp: number;
  businessDate: string;
}

/** The columns of a PropertyRow of `properties p`, for the owner's queries that join it. */
export const propertyRowColumns = `p.id, p.code, p.currency, p.amount_scale as "amountScale", p.vat_rate_bp as "vatRateBp",
  p.accommodation_tax_rate_bp as "accommodationTaxRateBp", to_char(p.business_date, 'YYYY-MM-DD') as "businessDate"`;

/**
 * The property by id, active or not; `lock` takes FOR NO KEY UPDATE (it serializes writers of the property's
 * counters and business date, and still lets other transactions insert rows that reference the property).
 */
export async function findPropertyRow(
  q: Queryable,
  propertyId: string,
  lock = false,
): Promise<PropertyRow | undefined> {
  const [row] = await q.query<PropertyRow>(
    `select ${propertyRowColumns} from properties p where p.id = $1${lock ? " for no key update" : ""}`,
    [propertyId],
  );
  return row;
}

/** The active property by id, else `not_found`. */
export async function propertyById(q: Queryable, propertyId: string): Promise<PropertyRow> {
  const [row] = await q.query<PropertyRow>(
    `select ${propertyRowColumns} from properties p where p.active and p.id = $1`,
    [propertyId],
  );
  if (row === undefined) throw new AppError("not_found", "Property not found.");
  return row;
}

/** Moves the property's business date one day on (the night audit, holding the row lock); returns the new date. */
export async function advanceBusinessDate(q: Queryable, propertyId: string, now: Date): Promise<string> {
  const [row] = await q.query<{ businessDate: string }>(
    `update properties set business_date = business_date + 1, updated_at = $2 where id = $1
     returning to_char(business_date, 'YYYY-MM-DD') as "businessDate"`,
    [propertyId, now],
  );
  if (row === undefined) throw new AppError("not_found", "Property not found.");
  return row.businessDate;
}
