import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { releaseInvoicedCharges, reverseReturnCredit } from "../folio/index.ts";
import { findPropertyRow } from "../properties/index.ts";
import * as repo from "./invoice.repository.ts";
import * as docs from "./documents.repository.ts";
import { claimReturnedLines, releaseReturnedLines, updateDelivery } from "./deliveries.repository.ts";
import { auditDelivery, documentInput, ISTANBUL_DATE, loadInvoice, type Invoice } from "./invoice-read.ts";
import { enqueueDeliveryStep } from "./delivery.jobs.ts";
import { invoiceTotals } from "./lines.ts";
import { renderUblTr } from "./ubl.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/**
 * Days after its issue date in which an e-Arşiv invoice may still be cancelled (the issue date plus 7 calendar
 * days, Turkish time), as GİB's e-Arşiv rules allow; later, a return invoice (IADE) corrects it.
 */
const EARSIV_CANCEL_DAYS = 7;
const MAX_REASON = 200;

export interface Corrections {
  /**
   * A DRAFT return invoice (IADE) of some lines (`lineNos`; none: all) of an issued SATIS invoice: the same buyer,
   * profile and amounts, the original named in the document's BillingReference. A line is returned at most once
   * (a return draft holds its lines); finalize it like any draft.
   */
  createReturnDraft(
    propertyId: string,
    actor: string,
    input: { invoiceId: string; lineNos: readonly number[] },
    keyed?: Keyed,
  ): Promise<Invoice>;
  /**
   * A REJECTED e-document queued again after a fix: the XML is made anew with the property's current issuer
   * (same number and ETTN), the delivery goes back to QUEUED and its job is enqueued. A QUEUED one (its retries
   * spent in a long outage) gets a new job, its XML unchanged.
   */
  requeueDelivery(propertyId: string, actor: string, input: { invoiceId: string }, keyed?: Keyed): Promise<Invoice>;
  /**
   * Cancels an issued e-Arşiv invoice within EARSIV_CANCEL_DAYS of its issue date: CANCELLED (it keeps its
   * number), its folio charges are open again, a return's lines can be returned again, and its e-document is
   * cancelled at the integrator (CANCELLING -> CANCELLED) unless it never left.
   */
  cancel(
    propertyId: string,
    actor: string,
    input: { invoiceId: string; reason: string },
    keyed?: Keyed,
  ): Promise<Invoice>;
}

/** The date `days` after a YYYY-MM-DD date. */
function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function createCorrections(deps: { transact: Transact; clock: Clock }): Corrections {
  const { transact, clock } = deps;
  return {
    async createReturnDraft(propertyId, actor, input, keyed) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      if (input.lineNos.some((n) => !Number.isInteger(n) || n < 1))
        throw invalidField("lineNos", "line numbers start at 1", "validation_failed");
      return transact(async (tx) => {
        const original = await loadInvoice(tx, propertyId, input.invoiceId, true);
        if (original === undefined) throw new AppError("not_found", "Invoice not found.");
        if (original.status !== "ISSUED" || original.typeCode !== "SATIS" || original.items.length === 0)
          throw new AppError(
            "invalid_transition",
            "Only an issued sales invoice with lines (not a draft, a cancelled invoice or a return) can be returned.",
          );
        const wanted = input.lineNos.length === 0 ? original.items.map((i) => i.lineNo) : [...new Set(input.lineNos)];
        const missing = wanted.filter((n) => !original.items.some((i) => i.lineNo === n));
        if (missing.length > 0)
          throw invalidField("lineNos", `the invoice has no line ${missing.join(", ")}`, "validation_failed");
        const now = clock.now();
        const id = newId(now.getTime());
        const items = original.items.filter((i) => wanted.includes(i.lineNo)).map((i, k) => ({ ...i, lineNo: k + 1 }));
        const t = invoiceTotals(items);
        await repo.insertDraft(
          tx,
          {
            id,
            propertyId,
            folioId: original.folioId,
            type: original.type,
            // GİB takes IADE under TEMELFATURA or EARSIVFATURA only: a commercial invoice is returned as TEMELFATURA
            profileId: original.profileId === "TICARIFATURA" ? "TEMELFATURA" : original.profileId,
            typeCode: "IADE",
            buyer: original.buyer,
            netMinor: t.netMinor,
            taxMinor: t.vatMinor,
            accommodationTaxMinor: t.accommodationTaxMinor,
            totalMinor: t.totalMinor,
            vatRateBp: original.vatRateBp,
            accommodationTaxRateBp: original.accommodationTaxRateBp,
            currency: original.currency,
            amountScale: original.amountScale,
            createdAt: now,
            chargeIds: [],
            returnOf: original.id,
          },
          actor,
        );
        await docs.insertItems(tx, propertyId, id, items);
        const claimed = await claimReturnedLines(tx, propertyId, original.id, wanted, id);
        if (claimed.length !== wanted.length) {
          const taken = wanted.filter((n) => !claimed.includes(n));
          throw new AppError("conflict", `Line ${taken.join(", ")} of the invoice is already on a return invoice.`);
        }
        const draft = (await loadInvoice(tx, propertyId, id))!;
        recordChange(tx, { propertyId, entity: "invoice", entityId: id, action: "create_return", after: draft });
        return draft;
      }, keyed);
    },

    async requeueDelivery(propertyId, _actor, input, keyed) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      return transact(async (tx) => {
        const invoice = await loadInvoice(tx, propertyId, input.invoiceId, true);
        if (invoice === undefined) throw new AppError("not_found", "Invoice not found.");
        const before = invoice.delivery;
        if (invoice.status !== "ISSUED" || (before?.status !== "REJECTED" && before?.status !== "QUEUED"))
          throw new AppError(
            "invalid_transition",
            "Only a REJECTED or QUEUED e-document of an issued invoice is sent again.",
          );
        let after = before;
        if (before.status === "REJECTED") {
          const doc = await documentInput(tx, invoice);
          if (doc === undefined)
            throw new AppError("invalid_transition", "The invoice's document cannot be made anew.");
          // the fix is in the property's settings (the issuer): the same number and ETTN, the document made anew
          await docs.replaceDocumentXml(tx, propertyId, invoice.id, renderUblTr(doc));
          after = await updateDelivery(
            tx,
            propertyId,
            invoice.id,
            { status: "QUEUED", reason: null, lastError: null, decidedAt: null },
            clock.now(),
          );
        }
        // QUEUED: its retries may be spent (a long outage): a new job; the XML stays as it is, since an upload
        // may already have reached the integrator under this ETTN
        auditDelivery(tx, propertyId, invoice.id, "requeue", before, after);
        await enqueueDeliveryStep(tx, { propertyId, invoiceId: invoice.id });
        return (await loadInvoice(tx, propertyId, invoice.id))!;
      }, keyed);
    },

    async cancel(propertyId, actor, input, keyed) {
      if (!isUuid(input.invoiceId)) throw invalidField("invoiceId", "must be a UUID");
      const reason = input.reason.trim();
      if (reason === "" || reason.length > MAX_REASON)
        throw invalidField("reason", `1 to ${MAX_REASON} characters`, "validation_failed");
      return transact(async (tx) => {
        const invoice = await loadInvoice(tx, propertyId, input.invoiceId, true);
        if (invoice === undefined) throw new AppError("not_found", "Invoice not found.");
        if (invoice.status !== "ISSUED")
          throw new AppError("invalid_transition", "Only an issued invoice can be cancelled.");
        if (invoice.type !== "E_ARSIV")
          throw new AppError(
            "invalid_transition",
            "An e-Fatura is not cancelled here: the buyer rejects it, or issue a return invoice (IADE).",
          );
        if ((await repo.issuedReturnsOf(tx, propertyId, invoice.id)) > 0)
          throw new AppError("invalid_transition", "The invoice has issued return invoices; cancel those first.");
        const now = clock.now();
        const lastDay = addDays(invoice.issueDate!, EARSIV_CANCEL_DAYS);
        if (ISTANBUL_DATE.format(now) > lastDay)
          throw new AppError(
            "invalid_transition",
            `The cancellation window ended on ${lastDay} (${EARSIV_CANCEL_DAYS} days after the issue date); issue a return invoice (IADE).`,
          );
        await repo.markCancelled(tx, propertyId, invoice.id, { at: now, by: actor, reason });
        await releaseInvoicedCharges(tx, propertyId, invoice.id);
        if (invoice.typeCode === "IADE")
          await reverseReturnCredit(tx, propertyId, {
            invoiceId: invoice.id,
            invoiceNumber: invoice.number!,
            businessDate: (await findPropertyRow(tx, propertyId))!.businessDate,
            postedAt: now,
            postedBy: actor,
          });
        await releaseReturnedLines(tx, propertyId, invoice.id);
        const before = invoice.delivery;
        if (before !== null && before.status !== "CANCELLING" && before.status !== "CANCELLED") {
          // never uploaded, or refused by the integrator: nothing is live there; otherwise cancel it there too
          const local = (before.status === "QUEUED" && before.attempts === 0) || before.status === "REJECTED";
          const after = await updateDelivery(
            tx,
            propertyId,
            invoice.id,
            { status: local ? "CANCELLED" : "CANCELLING" },
            now,
          );
          if (!local) await enqueueDeliveryStep(tx, { propertyId, invoiceId: invoice.id });
          auditDelivery(tx, propertyId, invoice.id, "cancel", before, after);
        }
        const cancelled = (await loadInvoice(tx, propertyId, invoice.id))!;
        recordChange(tx, {
          propertyId,
          entity: "invoice",
          entityId: invoice.id,
          action: "cancel",
          before: { ...invoice, delivery: undefined },
          after: { ...cancelled, delivery: undefined },
        });
        return cancelled;
      }, keyed);
    },
  };
}
