import type { Queryable } from "../../db/queryable.ts";

/**
 * The folio reports of the report catalogue (same shape as the reservation reports: property id, first and
 * last day, row limit; columns plus `total`) and the day's charges for the dashboard's one statement.
 */
type ReportQuery = (
  q: Queryable,
  propertyId: string,
  start: string,
  end: string,
  limit: number,
) => Promise<(Record<string, unknown> & { total: string })[]>;

const report =
  (sql: string): ReportQuery =>
  (q, propertyId, start, end, limit) =>
    q.query(sql, [propertyId, start, end, limit]);

/**
 * Charges posted per business date between start and end: room nights, extras and their sum (the credit lines of
 * return invoices are left out: the period's returns are read from the return invoices). The range is also
 * stated on the charges themselves: joined on the generated dates alone, the planner hashed every charge of the
 * hotel's history.
 */
export const revenueByDayReport = report(`
  select to_char(d.date, 'YYYY-MM-DD') as date, coalesce(sum(c.amount_minor) filter (where c.kind = 'ROOM'), 0)::text as "roomMinor",
      coalesce(sum(c.amount_minor) filter (where c.kind = 'EXTRA'), 0)::text as "extrasMinor", coalesce(sum(c.amount_minor) filter (where c.kind in ('ROOM', 'EXTRA')), 0)::text as "totalMinor",
      count(*) over () as total
    from generate_series($2::date, $3::date, interval '1 day') as d(date)
    left join folio_charges c on c.property_id = $1 and c.business_date = d.date::date and c.business_date between $2::date and $3::date
    group by d.date order by d.date limit $4`);

/** Payments posted between start and end per payment method: payments, reversals and the net amount. */
export const paymentsByMethodReport = report(`
  select p.method_code as method, p.method_kind as kind, count(*) filter (where p.amount_minor > 0)::int as payments,
      count(*) filter (where p.amount_minor < 0)::int as reversals, sum(p.amount_minor)::text as "amountMinor", count(*) over () as total
    from folio_payments p
    where p.property_id = $1 and p.business_date between $2::date and $3::date
    group by p.method_code, p.method_kind order by p.method_code, p.method_kind limit $4`);

/** The sum of the charges posted to the property's folios on the business date `dayExpr` (bigint). */
export function chargesOnDaySql(propertyIdExpr: string, dayExpr: string): string {
  return `(select coalesce(sum(own_c.amount_minor), 0) from folio_charges own_c where own_c.property_id = ${propertyIdExpr} and own_c.business_date = ${dayExpr})`;
}
