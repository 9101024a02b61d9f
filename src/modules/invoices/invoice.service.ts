import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { findFolio, markChargesInvoiced, postReturnCredit, uninvoicedCharges, type FolioRow } from "../folio/index.ts";
import { findPropertyRow } from "../properties/index.ts";
import { recordEvent, type InvoiceEventData } from "../events/index.ts";
import { defaultSeries, formatInvoiceNumber } from "./numbering.ts";
import * as repo from "./invoice.repository.ts";
import {
  auditDelivery,
  documentInput,
  ISTANBUL_DATE,
  ISTANBUL_TIME,
  loadInvoice,
  returnReference,
  type Invoice,
} from "./invoice-read.ts";
import { insertDelivery } from "./deliveries.repository.ts";
import { enqueueDeliveryStep } from "./delivery.jobs.ts";
import { createCorrections, type Corrections } from "./corrections.ts";
import * as docs from "./documents.repository.ts";
import { profileOf, validateBuyer, type BuyerInput } from "./buyer.ts";
import { invoiceTotals, itemsFromCharges } from "./lines.ts";
import {
  ratesResolver,
  requireInvoiceCurrency,
  validateIssuer,
  validateTaxRate,
  type IssuerInput,
  type TaxRateInput,
} from "./settings.ts";
import { renderUblTr } from "./ubl.ts";
import { describeRuleFailures, gibRuleFailures } from "./gib-rules.ts";
import { renderInvoicePdf } from "./pdf.ts";
import { lookUpEFatura } from "./registry.ts";
import type { EFaturaRegistry } from "./integrator.ts";
import type { Keyed } from "../../db/held-transaction.ts";

interface InvoiceDocument {
  contentType: "application/xml" | "application/pdf";
  content: Uint8Array;
  fileName: string;
}

export interface InvoiceDeps {
  transact: Transact;
  clock: Clock;
  /** GİB's e-Fatura registry through the integrator; absent where no integrator is configured. */
  registry?: EFaturaRegistry;
}

export type { Invoice } from "./invoice-read.ts";

export interface InvoiceService extends Corrections {
  /**
   * A DRAFT of every charge of the folio that is on no issued invoice yet, split into net, VAT and
   * accommodation tax with the property's current rates (see tax-split.ts). Nothing to invoice -> validation_failed.
   */
  createDraft(
    propertyId: string,
    actor: string,
    input: { folioId: string; buyer?: BuyerInput },
    keyed?: Keyed,
  ): Promise<Invoice>;
  /**
   * DRAFT -> ISSUED: takes the next gapless number of the property and the issue year, dates the invoice
   * with the property's business date, makes the UBL-TR XML, queues its delivery (row and job) and writes
   * `invoice.issued`, all in one transaction. An issued invoice
   * -> invalid_transition; a charge of the draft invoiced meanwhile by another draft -> conflict.
   */
  finalize(propertyId: string, actor: string, input: { invoiceId: string }, keyed?: Keyed): Promise<Invoice>;
  getInvoice(propertyId: string, invoiceId: string): Promise<Invoice>;
  /** The e-document of an issued invoice: its UBL-TR XML as stored when issued, or the PDF rendering of it. */
  getDocument(propertyId: string, input: { invoiceId: string; format: string }): Promise<InvoiceDocument>;
  /** Sets the rates of a charge code from a date on (the same code and date again replaces them). */
  setTaxRate(propertyId: string, actor: string, input: TaxRateInput, keyed?: Keyed): Promise<docs.TaxRateRow>;
  /** Sets the seller the property's documents name. */
  setIssuer(propertyId: string, actor: string, input: IssuerInput, keyed?: Keyed): Promise<docs.Issuer>;
}

export function createInvoiceService(deps: InvoiceDeps): InvoiceService {
  const { transact, clock } = deps;

  return {
    ...createCorrections(deps),
    async createDraft(propertyId, actor, input, keyed) {
      if (!isUuid(input.folioId)) throw invalidField("folioId", "must be a UUID");
      // the registry is asked before the transaction: no connection is held while the integrator answers
      const buyer = await lookUpEFatura(deps.registry, validateBuyer(input.buyer), input.buyer);
      return transact(async (tx) => {
        const folio = await findFolio(tx, propertyId, input.folioId, true);
        if (folio === undefined) throw new AppError("not_found", "Folio not found.");
        requireInvoiceCurrency(folio.currency);
        const property = await findPropertyRow(tx, propertyId);
        if (property === undefined) throw new AppError("not_found", "Property not found.");
        const charges = await uninvoicedCharges(tx, propertyId, folio.id);
        if (charges.length === 0)
          throw new AppError("validation_failed", "The folio has no charges left to invoice.", {
            details: [{ field: "folioId", reason: "no uninvoiced charges" }],
          });
        const items = itemsFromCharges(charges, await ratesResolver(tx, property, charges));
        const t = invoiceTotals(items);
        const profileId = profileOf(buyer);
        const now = clock.now();
        const id = newId(now.getTime());
        await repo.insertDraft(
          tx,
          {
            id,
            propertyId,
            folioId: folio.id,
            type: profileId === "EARSIVFATURA" ? "E_ARSIV" : "E_FATURA",
            profileId,
            typeCode: "SATIS",
            buyer,
            netMinor: t.netMinor,
            taxMinor: t.vatMinor,
            accommodationTaxMinor: t.accommodationTaxMinor,
            totalMinor: t.totalMinor,
            // The property's default rates at draft time; each line carries its own.
            vatRateBp: property.vatRateBp,
            accommodationTaxRateBp: property.accommodationTaxRateBp,
            currency: folio.currency,
            amountScale: folio.amountScale,
            createdAt: now,
            chargeIds: charges.map((c) => c.id),
            returnOf: null,
          },
          actor,
        );
        await docs.insertItems(tx, propertyId, id, items);
        const draft = (await loadInvoice(tx, propertyId, id))!;
        // the buyer is masked in the trail (personal data); where its e-Fatura flag came from is not
        const eFaturaSource = buyer.kind === "COMPANY" ? (buyer.eFaturaSource ?? "operator") : undefined;
        recordChange(tx, {
          propertyId,
          entity: "invoice",
          entityId: id,
          action: "create",
          after: { ...draft, eFaturaSource },
        });
        return draft;
      }, keyed);
    },

    async finalize(propertyId, actor, input, keyed) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      return transact(async (tx) => {
        // one round trip for what the checks need (the pool pipelines the statements)
        const [draft, property, issuer] = await Promise.all([
          loadInvoice(tx, propertyId, input.invoiceId, true),
          findPropertyRow(tx, propertyId),
          docs.findIssuer(tx, propertyId),
        ]);
        if (draft === undefined) throw new AppError("not_found", "Invoice not found.");
        if (draft.status !== "DRAFT") throw new AppError("invalid_transition", "The invoice is already issued.");
        requireInvoiceCurrency(draft.currency);
        if (property === undefined) throw new AppError("not_found", "Folio not found.");
        const issueDate = property.businessDate;
        const year = Number(issueDate.slice(0, 4));
        const series = defaultSeries(property.code);
        const [folio, returned, guess, reference] = await Promise.all([
          findFolio(tx, propertyId, draft.folioId),
          draft.returnOf === null ? undefined : repo.findInvoice(tx, propertyId, draft.returnOf),
          repo.peekInvoiceNumber(tx, propertyId, year, series),
          returnReference(tx, draft),
        ]);
        if (folio === undefined) throw new AppError("not_found", "Folio not found.");
        if (issuer === undefined)
          throw new AppError(
            "invalid_transition",
            "Set the property's invoice issuer (VKN, title, tax office, address) first.",
          );
        const { buyer, profileId } = draft;
        if (buyer === null || profileId === null || draft.items.length === 0)
          throw new AppError("invalid_transition", "This draft predates e-documents; create a new draft.");
        if (draft.returnOf !== null && returned?.status !== "ISSUED")
          throw new AppError("invalid_transition", "The invoice this draft returns is no longer issued (cancelled).");
        const issuedAt = clock.now();
        const ettn = newId(issuedAt.getTime());
        const issueTime = ISTANBUL_TIME.format(issuedAt);
        const today = ISTANBUL_DATE.format(issuedAt);
        const document = (number: string) => {
          const xml = renderUblTr({
            ...{ number, ettn, profileId, typeCode: draft.typeCode, issueDate, issueTime, buyer, issuer },
            ...{ currency: draft.currency, amountScale: draft.amountScale, items: draft.items, ...reference },
          });
          // GİB's UBL-TR rules: a document that breaks one is never issued (nothing is written, no number taken).
          // The issue date is the business date; "not after today" is held against Turkey's date of the upload by
          // the delivery job (a business date may run ahead of the calendar, as test hotels' do).
          const broken = gibRuleFailures(xml, issueDate > today ? issueDate : today);
          if (broken.length > 0)
            throw new AppError(
              "validation_failed",
              `The e-document would break ${describeRuleFailures(broken)}. Nothing was issued.`,
            );
          return xml;
        };
        // The rules run on the document with the number the counter gives next, before its row is locked: the
        // lock is held for the writes only. Another finalization of the property may take that number meanwhile;
        // then the document with the number taken is checked again, so the issued document is always the checked one.
        const guessed = formatInvoiceNumber(guess.series, year, guess.sequence);
        const checked = document(guessed);
        // the charges and the number in one round trip: on a conflict the rollback returns the number
        const [free, taken] = await Promise.all([
          markChargesInvoiced(tx, propertyId, draft.chargeIds, draft.id),
          repo.takeInvoiceNumber(tx, propertyId, year, series),
        ]);
        if (free !== draft.chargeIds.length) {
          throw new AppError("conflict", "Some charges of this draft were invoiced meanwhile; create a new draft.");
        }
        const number = formatInvoiceNumber(taken.series, year, taken.sequence);
        const xml = number === guessed ? checked : document(number);
        const fields = { series: taken.series, number, issueDate, issuedAt, issuedBy: actor };
        // the invoice, its document and its delivery row in one round trip; its first job with it or neither
        await Promise.all([
          repo.markIssued(tx, propertyId, draft.id, fields),
          docs.insertDocument(tx, propertyId, draft.id, { ettn, issueTime, xml }, issuedAt),
          insertDelivery(tx, propertyId, draft.id, ettn, issuedAt),
        ]);
        if (draft.typeCode === "IADE")
          await postReturnCredit(tx, propertyId, {
            folioId: folio.id,
            invoiceId: draft.id,
            invoiceNumber: number,
            amountMinor: draft.totalMinor,
            businessDate: issueDate,
            postedAt: issuedAt,
            postedBy: actor,
          });
        await enqueueDeliveryStep(tx, { propertyId, invoiceId: draft.id });
        const issued = (await loadInvoice(tx, propertyId, draft.id))!;
        recordChange(tx, {
          propertyId,
          entity: "invoice",
          entityId: draft.id,
          action: "issue",
          before: { ...draft, delivery: undefined },
          after: { ...issued, delivery: undefined },
        });
        auditDelivery(tx, propertyId, draft.id, "queue", undefined, issued.delivery!);
        await recordEvent(tx, {
          propertyId,
          type: "invoice.issued",
          occurredAt: issuedAt,
          data: invoiceEventData(issued, folio),
        });
        return issued;
      }, keyed);
    },

    async getInvoice(propertyId, invoiceId) {
      if (!isUuid(invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      return transact(async (tx) => {
        const invoice = await loadInvoice(tx, propertyId, invoiceId);
        if (invoice === undefined) throw new AppError("not_found", "Invoice not found.");
        return invoice;
      });
    },
    async getDocument(propertyId, input) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      if (input.format !== "xml" && input.format !== "pdf") throw invalidField("format", "must be xml or pdf");
      const found = await transact(async (tx) => {
        const invoice = await loadInvoice(tx, propertyId, input.invoiceId);
        if (invoice === undefined) throw new AppError("not_found", "Invoice not found.");
        if (invoice.status === "DRAFT")
          throw new AppError("not_found", "A draft has no e-document; finalize it first.");
        const doc = await documentInput(tx, invoice);
        if (doc === undefined)
          throw new AppError("not_found", "This invoice was issued before e-documents and has none.");
        const stored = (await docs.findDocument(tx, propertyId, invoice.id))!;
        return { doc, xml: stored.xml };
      });
      if (input.format === "xml")
        return {
          contentType: "application/xml",
          content: Buffer.from(found.xml, "utf8"),
          fileName: `${found.doc.number}.xml`,
        };
      return {
        contentType: "application/pdf",
        content: await renderInvoicePdf(found.doc),
        fileName: `${found.doc.number}.pdf`,
      };
    },
    async setTaxRate(propertyId, actor, input, keyed) {
      const row = validateTaxRate(input);
      return transact(async (tx) => {
        await docs.upsertTaxRate(tx, propertyId, row, clock.now(), actor);
        recordChange(tx, {
          propertyId,
          entity: "invoice_tax_rate",
          entityId: `${row.chargeCode}@${row.validFrom}`,
          action: "set",
          after: row,
        });
        return row;
      }, keyed);
    },
    async setIssuer(propertyId, _actor, input, keyed) {
      const issuer = validateIssuer(input);
      return transact(async (tx) => {
        const before = await docs.findIssuer(tx, propertyId);
        await docs.upsertIssuer(tx, propertyId, issuer, clock.now());
        recordChange(tx, {
          propertyId,
          entity: "invoice_issuer",
          entityId: propertyId,
          action: "set",
          before,
          after: issuer,
        });
        return issuer;
      }, keyed);
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
