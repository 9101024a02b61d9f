import type { Queryable } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import type { Buyer } from "./buyer.ts";

/** Persistence of invoices, their lines and the gapless counters. Every query filters by property id. */

export interface InvoiceRow {
  id: string;
  propertyId: string;
  folioId: string;
  status: "DRAFT" | "ISSUED" | "CANCELLED";
  type: "E_ARSIV" | "E_FATURA";
  /** The e-document profile; null on invoices drafted before e-documents. */
  profileId: "EARSIVFATURA" | "TEMELFATURA" | "TICARIFATURA" | null;
  typeCode: "SATIS" | "IADE";
  /** Null on invoices drafted before buyers were recorded. */
  buyer: Buyer | null;
  /** The e-document's ETTN once issued with one. */
  ettn: string | null;
  series: string | null;
  number: string | null;
  issueDate: string | null;
  netMinor: bigint;
  taxMinor: bigint;
  accommodationTaxMinor: bigint;
  totalMinor: bigint;
  vatRateBp: number;
  accommodationTaxRateBp: number;
  currency: string;
  amountScale: number;
  createdAt: Date;
  issuedAt: Date | null;
  chargeIds: string[];
  /** For a return invoice (IADE): the invoice it returns. */
  returnOf: string | null;
  cancelledAt: Date | null;
  cancelReason: string | null;
}

type Raw = Record<string, unknown>;

const columns = `i.id, i.property_id, i.folio_id, i.status, i.type, i.series, i.number, i.issue_date::text as issue_date,
  i.net_minor::text as net_minor, i.tax_minor::text as tax_minor, i.accommodation_tax_minor::text as accommodation_tax_minor,
  i.total_minor::text as total_minor, i.vat_rate_bp, i.accommodation_tax_rate_bp, i.currency, i.amount_scale, i.created_at, i.issued_at,
  i.profile_id, i.type_code, i.buyer, (select d.ettn::text from invoice_documents d where d.property_id = i.property_id and d.invoice_id = i.id) as ettn,
  i.return_of::text as return_of, i.cancelled_at, i.cancel_reason,
  array(select l.charge_id::text from invoice_lines l where l.property_id = i.property_id and l.invoice_id = i.id order by l.charge_id) as charge_ids`;

function toInvoice(r: Raw): InvoiceRow {
  return {
    id: r.id as string,
    propertyId: r.property_id as string,
    folioId: r.folio_id as string,
    status: r.status as InvoiceRow["status"],
    type: r.type as InvoiceRow["type"],
    profileId: (r.profile_id as InvoiceRow["profileId"]) ?? null,
    typeCode: r.type_code as InvoiceRow["typeCode"],
    buyer: (r.buyer as Buyer | null) ?? null,
    ettn: (r.ettn as string | null) ?? null,
    series: (r.series as string | null) ?? null,
    number: (r.number as string | null) ?? null,
    issueDate: (r.issue_date as string | null) ?? null,
    netMinor: BigInt(r.net_minor as string),
    taxMinor: BigInt(r.tax_minor as string),
    accommodationTaxMinor: BigInt(r.accommodation_tax_minor as string),
    totalMinor: BigInt(r.total_minor as string),
    vatRateBp: r.vat_rate_bp as number,
    accommodationTaxRateBp: r.accommodation_tax_rate_bp as number,
    currency: r.currency as string,
    amountScale: r.amount_scale as number,
    createdAt: r.created_at as Date,
    issuedAt: (r.issued_at as Date | null) ?? null,
    chargeIds: (r.charge_ids as string[] | null) ?? [],
    returnOf: (r.return_of as string | null) ?? null,
    cancelledAt: (r.cancelled_at as Date | null) ?? null,
    cancelReason: (r.cancel_reason as string | null) ?? null,
  };
}

export async function findInvoice(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  lock = false,
): Promise<InvoiceRow | undefined> {
  const [r] = await tx.query<Raw>(
    `select ${columns} from invoices i where i.property_id = $1 and i.id = $2 ${lock ? "for no key update of i" : ""}`,
    [propertyId, invoiceId],
  );
  return r === undefined ? undefined : toInvoice(r);
}

export async function insertDraft(
  tx: Tx,
  row: Omit<
    InvoiceRow,
    "status" | "series" | "number" | "issueDate" | "issuedAt" | "ettn" | "cancelledAt" | "cancelReason"
  >,
  createdBy: string,
): Promise<void> {
  await tx.query(
    `insert into invoices (id, property_id, folio_id, status, type, net_minor, tax_minor, accommodation_tax_minor, total_minor,
       vat_rate_bp, accommodation_tax_rate_bp, currency, amount_scale, created_at, created_by, profile_id, type_code, buyer, return_of)
     values ($1, $2, $3, 'DRAFT', $4, $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9, $10, $11, $12, $13, $14, $15, $16, $17::jsonb, $18)`,
    [
      row.id,
      row.propertyId,
      row.folioId,
      row.type,
      row.netMinor.toString(),
      row.taxMinor.toString(),
      row.accommodationTaxMinor.toString(),
      row.totalMinor.toString(),
      row.vatRateBp,
      row.accommodationTaxRateBp,
      row.currency,
      row.amountScale,
      row.createdAt,
      createdBy,
      row.profileId,
      row.typeCode,
      row.buyer === null ? null : JSON.stringify(row.buyer),
      row.returnOf,
    ],
  );
  await tx.query(`insert into invoice_lines (invoice_id, charge_id, property_id) select $1, unnest($2::uuid[]), $3`, [
    row.id,
    row.chargeIds,
    row.propertyId,
  ]);
}

/**
 * The next invoice number of a property and year, in one statement. The counter row stays locked by the update
 * until the finalizing transaction ends, so concurrent finalizations queue on it, and a rollback returns the
 * number: no gaps. A new year's row starts at 1 with `defaultSeries`; an existing row keeps its series.
 */
export async function takeInvoiceNumber(
  tx: Tx,
  propertyId: string,
  year: number,
  defaultSeries: string,
): Promise<{ series: string; sequence: bigint }> {
  const [row] = await tx.query<{ series: string; last_number: string }>(
    `insert into invoice_counters (property_id, year, series, last_number) values ($1, $2, $3, 1)
     on conflict (property_id, year) do update set last_number = invoice_counters.last_number + 1
     returning series, last_number::text as last_number`,
    [propertyId, year, defaultSeries],
  );
  return { series: row!.series, sequence: BigInt(row!.last_number) };
}

/**
 * The number `takeInvoiceNumber` would give now, read without a lock: finalize checks its document with it before
 * it takes the number, and checks again in the rare case another finalization took it meanwhile.
 */
export async function peekInvoiceNumber(
  tx: Tx,
  propertyId: string,
  year: number,
  defaultSeries: string,
): Promise<{ series: string; sequence: bigint }> {
  const [row] = await tx.query<{ series: string; last_number: string }>(
    `select series, last_number::text as last_number from invoice_counters where property_id = $1 and year = $2`,
    [propertyId, year],
  );
  return row === undefined
    ? { series: defaultSeries, sequence: 1n }
    : { series: row.series, sequence: BigInt(row.last_number) + 1n };
}

export async function markIssued(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  f: { series: string; number: string; issueDate: string; issuedAt: Date; issuedBy: string },
): Promise<void> {
  await tx.query(
    `update invoices set status = 'ISSUED', series = $3, number = $4, issue_date = $5::date, issued_at = $6, issued_by = $7
      where property_id = $1 and id = $2 and status = 'DRAFT'`,
    [propertyId, invoiceId, f.series, f.number, f.issueDate, f.issuedAt, f.issuedBy],
  );
}

/** The invoices of the folios (a guest's data export names the invoices of the guest's stays). */
export async function invoicesOfFolios(
  q: Queryable,
  propertyId: string,
  folioIds: readonly string[],
): Promise<InvoiceRow[]> {
  if (folioIds.length === 0) return [];
  const rows = await q.query<Raw>(
    `select ${columns} from invoices i where i.property_id = $1 and i.folio_id = any($2::uuid[]) order by i.created_at, i.id`,
    [propertyId, folioIds],
  );
  return rows.map(toInvoice);
}

export async function markCancelled(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  f: { at: Date; by: string; reason: string },
): Promise<void> {
  await tx.query(
    `update invoices set status = 'CANCELLED', cancelled_at = $3, cancelled_by = $4, cancel_reason = $5
      where property_id = $1 and id = $2 and status = 'ISSUED'`,
    [propertyId, invoiceId, f.at, f.by, f.reason],
  );
}

/** Issued return invoices (IADE) of an invoice. */
export async function issuedReturnsOf(tx: Tx, propertyId: string, invoiceId: string): Promise<number> {
  const [r] = await tx.query<{ n: number }>(
    `select count(*)::int as n from invoices where property_id = $1 and return_of = $2 and status = 'ISSUED'`,
    [propertyId, invoiceId],
  );
  return r?.n ?? 0;
}
