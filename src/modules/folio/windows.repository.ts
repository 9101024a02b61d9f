import type { Tx } from "../../db/transaction.ts";

/**
 * Persistence of a reservation's folio windows: routing rules (charge code -> window), moving a charge between two
 * folios and the CREDIT lines of return invoices. Every query takes the property id and filters by it; balances
 * change in the same statement as the ledger row, as in folio.repository.ts.
 */

export interface RoutingRule {
  reservationId: string;
  chargeCode: string;
  windowNo: number;
}

/** The window a charge code of the reservation is routed to, or undefined (the folio it was posted to). */
export async function findRoute(
  tx: Tx,
  propertyId: string,
  reservationId: string,
  chargeCode: string,
): Promise<number | undefined> {
  const [r] = await tx.query<{ window_no: number }>(
    `select window_no from folio_routing_rules where property_id = $1 and reservation_id = $2 and charge_code = $3`,
    [propertyId, reservationId, chargeCode],
  );
  return r?.window_no;
}

export async function listRoutes(tx: Tx, propertyId: string, reservationId: string): Promise<RoutingRule[]> {
  const rows = await tx.query<{ charge_code: string; window_no: number }>(
    `select charge_code, window_no from folio_routing_rules where property_id = $1 and reservation_id = $2
     order by charge_code`,
    [propertyId, reservationId],
  );
  return rows.map((r) => ({ reservationId, chargeCode: r.charge_code, windowNo: r.window_no }));
}

/** Sets (windowNo) or removes (undefined) the rule of a code. */
export async function setRoute(
  tx: Tx,
  propertyId: string,
  rule: { reservationId: string; chargeCode: string; windowNo: number | undefined },
  at: Date,
): Promise<void> {
  if (rule.windowNo === undefined) {
    await tx.query(
      `delete from folio_routing_rules where property_id = $1 and reservation_id = $2 and charge_code = $3`,
      [propertyId, rule.reservationId, rule.chargeCode],
    );
    return;
  }
  await tx.query(
    `insert into folio_routing_rules (property_id, reservation_id, charge_code, window_no, created_at)
     values ($1, $2, $3, $4, $5)
     on conflict (property_id, reservation_id, charge_code) do update set window_no = excluded.window_no`,
    [propertyId, rule.reservationId, rule.chargeCode, rule.windowNo, at],
  );
}

/** The highest window the reservation has (0 without folios). */
export async function lastWindow(tx: Tx, propertyId: string, reservationId: string): Promise<number> {
  const [r] = await tx.query<{ n: number }>(
    `select coalesce(max(window_no), 0)::int as n from folios where property_id = $1 and reservation_id = $2`,
    [propertyId, reservationId],
  );
  return r!.n;
}

/**
 * Moves a charge to another folio: the charge row, the source's balance and the target's, in one statement (both
 * folios are locked by the caller). Only a charge on no invoice moves; returns false when it was invoiced meanwhile.
 */
export async function moveCharge(
  tx: Tx,
  propertyId: string,
  chargeId: string,
  fromFolioId: string,
  toFolioId: string,
): Promise<boolean> {
  const rows = await tx.query(
    `with moved as (
       update folio_charges set folio_id = $4
       where property_id = $1 and id = $2 and folio_id = $3 and invoice_id is null
       returning amount_minor),
     source as (
       update folios set balance_minor = balance_minor - (select amount_minor from moved)
       where property_id = $1 and id = $3 and exists (select 1 from moved)),
     target as (
       update folios set balance_minor = balance_minor + (select amount_minor from moved)
       where property_id = $1 and id = $4 and exists (select 1 from moved))
     select 1 from moved`,
    [propertyId, chargeId, fromFolioId, toFolioId],
  );
  return rows.length === 1;
}

/**
 * A CREDIT line (negative `amountMinor`) on the folio for an issued return invoice, or its CREDIT_REVERSAL
 * (positive) when the return is cancelled; added to the folio's balance in the same statement.
 */
export async function insertCreditLine(
  tx: Tx,
  propertyId: string,
  c: {
    kind: "CREDIT" | "CREDIT_REVERSAL";
    code: string;
    id: string;
    folioId: string;
    description: string;
    amountMinor: bigint;
    businessDate: string;
    invoiceId: string;
    postedAt: Date;
    postedBy: string;
  },
): Promise<void> {
  await tx.query(
    `with c as (
       insert into folio_charges (id, property_id, folio_id, kind, code, description, amount_minor, business_date, invoice_id, posted_at, posted_by)
       values ($1, $2, $3, $10, $11, $4, $5::bigint, $6::date, $7, $8, $9)
       returning property_id, folio_id, amount_minor)
     update folios f set balance_minor = f.balance_minor + c.amount_minor
     from c where f.property_id = c.property_id and f.id = c.folio_id`,
    [
      c.id,
      propertyId,
      c.folioId,
      c.description,
      c.amountMinor.toString(),
      c.businessDate,
      c.invoiceId,
      c.postedAt,
      c.postedBy,
      c.kind,
      c.code,
    ],
  );
}

/** The CREDIT line of a return invoice, if one was written. */
export async function findCreditLine(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
): Promise<{ folioId: string; amountMinor: bigint } | undefined> {
  const [r] = await tx.query<{ folio_id: string; amount: string }>(
    `select folio_id, amount_minor::text as amount from folio_charges
     where property_id = $1 and invoice_id = $2 and kind = 'CREDIT'`,
    [propertyId, invoiceId],
  );
  return r === undefined ? undefined : { folioId: r.folio_id, amountMinor: BigInt(r.amount) };
}
