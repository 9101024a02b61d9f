import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { findFolio, markChargesInvoiced, uninvoicedCharges, type FolioRow } from "../folio/index.ts";
import { findPropertyRow } from "../properties/index.ts";
import { recordEvent, type InvoiceEventData } from "../events/index.ts";
import { splitGross } from "./tax-split.ts";
import { defaultSeries, formatInvoiceNumber } from "./numbering.ts";
import * as repo from "./invoice.repository.ts";
import type { InvoiceRow } from "./invoice.repository.ts";

export type Invoice = InvoiceRow;

export interface InvoiceDeps {
  transact: Transact;
  clock: Clock;
}

export interface InvoiceService {
  /**
   * A DRAFT of every charge of the folio that is on no issued invoice yet, split into net, VAT and
   * accommodation tax with the property's current rates (see tax-split.ts). Nothing to invoice -> validation_failed.
   */
  createDraft(propertyId: string, actor: string, input: { folioId: string }): Promise<Invoice>;
  /**
   * DRAFT -> ISSUED: takes the next gapless number of the property and the issue year, dates the invoice
   * with the property's business date and writes `invoice.issued`, all in one transaction. An issued invoice
   * -> invalid_transition; a charge of the draft invoiced meanwhile by another draft -> conflict.
   */
  finalize(propertyId: string, actor: string, input: { invoiceId: string }): Promise<Invoice>;
  getInvoice(propertyId: string, invoiceId: string): Promise<Invoice>;
}

export function createInvoiceService(deps: InvoiceDeps): InvoiceService {
  const { transact, clock } = deps;

  return {
    async createDraft(propertyId, actor, input) {
      if (!isUuid(input.folioId)) throw invalidField("folioId", "must be a UUID");
      return transact(async (tx) => {
        const folio = await findFolio(tx, propertyId, input.folioId, true);
        if (folio === undefined) throw new AppError("not_found", "Folio not found.");
        const property = await findPropertyRow(tx, propertyId);
        if (property === undefined) throw new AppError("not_found", "Property not found.");
        const charges = await uninvoicedCharges(tx, propertyId, folio.id);
        if (charges.length === 0)
          throw new AppError("validation_failed", "The folio has no charges left to invoice.", {
            details: [{ field: "folioId", reason: "no uninvoiced charges" }],
          });
        const gross = charges.reduce((s, c) => s + c.amountMinor, 0n);
        const rates = { vatRateBp: property.vatRateBp, accommodationTaxRateBp: property.accommodationTaxRateBp };
        const split = splitGross(gross, rates);
        const now = clock.now();
        const id = newId(now.getTime());
        await repo.insertDraft(
          tx,
          {
            id,
            propertyId,
            folioId: folio.id,
            type: "E_ARSIV",
            ...split,
            ...rates,
            currency: folio.currency,
            amountScale: folio.amountScale,
            createdAt: now,
            chargeIds: charges.map((c) => c.id),
          },
          actor,
        );
        const draft = (await repo.findInvoice(tx, propertyId, id))!;
        recordChange(tx, { propertyId, entity: "invoice", entityId: id, action: "create", after: draft });
        return draft;
      });
    },

    async finalize(propertyId, actor, input) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      return transact(async (tx) => {
        const draft = await repo.findInvoice(tx, propertyId, input.invoiceId, true);
        if (draft === undefined) throw new AppError("not_found", "Invoice not found.");
        if (draft.status !== "DRAFT") throw new AppError("invalid_transition", "The invoice is already issued.");
        const folio = await findFolio(tx, propertyId, draft.folioId);
        const property = await findPropertyRow(tx, propertyId);
        if (folio === undefined || property === undefined) throw new AppError("not_found", "Folio not found.");
        const free = await markChargesInvoiced(tx, propertyId, draft.chargeIds, draft.id);
        if (free !== draft.chargeIds.length) {
          throw new AppError("conflict", "Some charges of this draft were invoiced meanwhile; create a new draft.");
        }
        const issueDate = property.businessDate;
        const year = Number(issueDate.slice(0, 4));
        const { series, sequence } = await repo.takeInvoiceNumber(tx, propertyId, year, defaultSeries(property.code));
        const number = formatInvoiceNumber(series, year, sequence);
        const issuedAt = clock.now();
        await repo.markIssued(tx, propertyId, draft.id, { series, number, issueDate, issuedAt, issuedBy: actor });
        const issued = (await repo.findInvoice(tx, propertyId, draft.id))!;
        recordChange(tx, {
          propertyId,
          entity: "invoice",
          entityId: draft.id,
          action: "issue",
          before: draft,
          after: issued,
        });
        await recordEvent(tx, {
          propertyId,
          type: "invoice.issued",
          occurredAt: issuedAt,
          data: invoiceEventData(issued, folio),
        });
        return issued;
      });
    },

    async getInvoice(propertyId, invoiceId) {
      if (!isUuid(invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      return transact(async (tx) => {
        const invoice = await repo.findInvoice(tx, propertyId, invoiceId);
        if (invoice === undefined) throw new AppError("not_found", "Invoice not found.");
        return invoice;
      });
    },
  };
}

/** Exactly the spec's "Invoice data" fields; no personal data. */
function invoiceEventData(i: Invoice, folio: FolioRow): InvoiceEventData {
  return {
    invoiceId: i.id,
    series: i.series,
    number: i.number,
    type: i.type,
    status: i.status,
    issueDate: i.issueDate,
    netMinor: Number(i.netMinor),
    taxMinor: Number(i.taxMinor),
    accommodationTaxMinor: Number(i.accommodationTaxMinor),
    totalMinor: Number(i.totalMinor),
    amountScale: i.amountScale,
    currency: i.currency,
    folioId: folio.id,
    folioNumber: folio.number,
    reservationId: folio.reservationId,
  };
}
