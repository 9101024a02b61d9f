import type { Tx } from "../../db/transaction.ts";
import { recordChange } from "../audit/index.ts";
import * as repo from "./invoice.repository.ts";
import type { InvoiceRow } from "./invoice.repository.ts";
import * as docs from "./documents.repository.ts";
import { findDelivery, type Delivery } from "./deliveries.repository.ts";
import type { InvoiceItem } from "./lines.ts";
import type { UblInput } from "./ubl.ts";

/** An invoice with its lines (none on invoices drafted before lines were kept) and its e-document's delivery. */
export type Invoice = InvoiceRow & { items: InvoiceItem[]; delivery: Delivery | null };

export const ISTANBUL_TIME = new Intl.DateTimeFormat("en-GB", {
  timeZone: "Europe/Istanbul",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

export const ISTANBUL_DATE = new Intl.DateTimeFormat("en-CA", {
  timeZone: "Europe/Istanbul",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
});

export async function loadInvoice(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  lock = false,
): Promise<Invoice | undefined> {
  // one round trip: the three statements leave together (the pool pipelines them)
  const [row, items, delivery] = await Promise.all([
    repo.findInvoice(tx, propertyId, invoiceId, lock),
    docs.findItems(tx, propertyId, invoiceId),
    findDelivery(tx, propertyId, invoiceId),
  ]);
  if (row === undefined) return undefined;
  return { ...row, items, delivery: delivery ?? null };
}

/** The document data of an issued invoice; undefined for invoices issued before e-documents. */
export async function documentInput(tx: Tx, invoice: Invoice, issuer?: docs.Issuer): Promise<UblInput | undefined> {
  const stored = await docs.findDocument(tx, invoice.propertyId, invoice.id);
  const seller = issuer ?? (await docs.findIssuer(tx, invoice.propertyId));
  if (stored === undefined || seller === undefined || invoice.buyer === null || invoice.profileId === null)
    return undefined;
  return {
    number: invoice.number!,
    ettn: stored.ettn,
    profileId: invoice.profileId,
    typeCode: invoice.typeCode,
    issueDate: invoice.issueDate!,
    issueTime: stored.issueTime,
    currency: invoice.currency,
    amountScale: invoice.amountScale,
    issuer: seller,
    buyer: invoice.buyer,
    items: invoice.items,
    ...(await returnReference(tx, invoice)),
  };
}

/** The BillingReference of a return invoice: the number and issue date of the invoice it returns. */
export async function returnReference(
  tx: Tx,
  invoice: Pick<InvoiceRow, "propertyId" | "returnOf">,
): Promise<{ returnOf?: { number: string; issueDate: string } }> {
  if (invoice.returnOf === null) return {};
  const original = await repo.findInvoice(tx, invoice.propertyId, invoice.returnOf);
  if (original?.number == null || original.issueDate === null) return {};
  return { returnOf: { number: original.number, issueDate: original.issueDate } };
}

/** One step of a delivery in the audit trail (entity `invoice_delivery`, keyed by the invoice). */
export function auditDelivery(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  action: string,
  before: Delivery | undefined,
  after: Delivery,
): void {
  recordChange(tx, { propertyId, entity: "invoice_delivery", entityId: invoiceId, action, before, after });
}
