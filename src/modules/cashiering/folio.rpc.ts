import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ChargeKind, FolioService as FolioRpc } from "../../../gen/hotelops/folio/v1/folio_pb.js";
import { invalidField } from "../../errors.ts";
import { requestProperty, requirePrincipal } from "../auth/index.ts";
import type { InvoiceService } from "../invoices/index.ts";
import { addressIn, buyerIn, invoiceOut } from "./invoice-messages.ts";
import type { NightAuditCheck, NightAuditService, UnchargedNight } from "../night-audit/index.ts";
import type { ChargeRow, Folio, FolioService, FolioWindows, PaymentRow } from "../folio/index.ts";
import type { CityLedger } from "../city-ledger/index.ts";
import { ledgerHandlers, windowHandlers } from "./ledger.rpc.ts";
import { keyedOf } from "../../server/context.ts";

export const folioRpcServices = [FolioRpc];

export interface FolioRpcServices {
  folios: FolioService;
  windows: FolioWindows;
  ledger: CityLedger;
  invoices: InvoiceService;
  nightAudit: NightAuditService;
}

/**
 * The property and the acting caller of one call. The property the request names was checked against the caller's
 * reach by the authentication interceptor (404 out of reach); an empty code means the caller's only property (a
 * staff session's active property, or an internal client's single grant).
 */
export function scope(ctx: HandlerContext): { propertyId: string; actor: string } {
  const principal = requirePrincipal(ctx.values);
  const actor = principal.kind === "staff" ? `user:${principal.userId}` : `client:${principal.clientId}`;
  const property = requestProperty(ctx.values);
  if (property !== undefined) return { propertyId: property.id, actor };
  const [only, ...more] = principal.propertyIds;
  if (only === undefined || more.length > 0)
    throw invalidField("propertyCode", "required for clients with several properties");
  return { propertyId: only, actor };
}

const ts = (d: Date) => timestampFromDate(d);

const chargeKinds = {
  ROOM: ChargeKind.ROOM,
  EXTRA: ChargeKind.EXTRA,
  CREDIT: ChargeKind.CREDIT,
  CREDIT_REVERSAL: ChargeKind.CREDIT_REVERSAL,
} as const;

export const chargeOut = (c: ChargeRow) => ({
  id: c.id,
  folioId: c.folioId,
  kind: chargeKinds[c.kind],
  code: c.code,
  description: c.description,
  amountMinor: c.amountMinor,
  businessDate: c.businessDate,
  ...(c.reservationRoomId !== null ? { reservationRoomId: c.reservationRoomId } : {}),
  ...(c.invoiceId !== null ? { invoiceId: c.invoiceId } : {}),
  postedAt: ts(c.postedAt),
});

export const paymentOut = (p: PaymentRow) => ({
  id: p.id,
  amountMinor: p.amountMinor,
  methodCode: p.methodCode,
  methodKind: p.methodKind,
  reference: p.reference,
  ...(p.reversedPaymentId !== null ? { reversedPaymentId: p.reversedPaymentId } : {}),
  ...(p.reversedByPaymentId !== null ? { reversedByPaymentId: p.reversedByPaymentId } : {}),
  businessDate: p.businessDate,
  postedAt: ts(p.postedAt),
  refundedMinor: p.refundedMinor,
});

export const folioOut = (f: Folio) => ({
  id: f.id,
  window: f.windowNo,
  name: f.name,
  number: f.number,
  reservationId: f.reservationId,
  reservationCode: f.reservationCode,
  currency: f.currency,
  amountScale: f.amountScale,
  chargesMinor: f.chargesMinor,
  paymentsMinor: f.paymentsMinor,
  balanceMinor: f.balanceMinor,
  creditMinor: f.creditMinor,
  charges: f.charges.map(chargeOut),
  payments: f.payments.map(paymentOut),
  createdAt: ts(f.createdAt),
});

const checkOut = (c: NightAuditCheck) => ({ id: c.id, status: c.status, message: c.message, count: c.count });
const unchargedOut = (n: UnchargedNight) => ({ ...n });

export function registerFolioRpc(router: ConnectRouter, s: FolioRpcServices): void {
  router.service(FolioRpc, {
    ...windowHandlers(s),
    ...ledgerHandlers(s),
    async getFolio(req, ctx) {
      const { propertyId } = scope(ctx);
      if ((req.folioId === "") === (req.reservationId === ""))
        throw invalidField("folioId", "give exactly one of folioId and reservationId");
      const folio = await s.folios.getFolio(
        propertyId,
        req.folioId !== ""
          ? { folioId: req.folioId }
          : { reservationId: req.reservationId, ...(req.window !== 0 ? { windowNo: req.window } : {}) },
      );
      return { folio: folioOut(folio) };
    },
    async postCharge(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const charge = await s.folios.postCharge(
        propertyId,
        actor,
        {
          folioId: req.folioId,
          code: req.code,
          description: req.description,
          amountMinor: req.amountMinor,
        },
        keyedOf(ctx),
      );
      return { charge: chargeOut(charge) };
    },
    async postPayment(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const payment = await s.folios.postPayment(
        propertyId,
        actor,
        {
          folioId: req.folioId,
          amountMinor: req.amountMinor,
          methodCode: req.methodCode,
          reference: req.reference,
        },
        keyedOf(ctx),
      );
      return { payment: paymentOut(payment) };
    },
    async reversePayment(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const reversal = await s.folios.reversePayment(
        propertyId,
        actor,
        {
          paymentId: req.paymentId,
          reference: req.reference,
        },
        keyedOf(ctx),
      );
      return { reversal: paymentOut(reversal) };
    },
    async refundPayment(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const refund = await s.folios.refundPayment(
        propertyId,
        actor,
        {
          paymentId: req.paymentId,
          amountMinor: req.amountMinor,
          reference: req.reference,
        },
        keyedOf(ctx),
      );
      return { refund: paymentOut(refund) };
    },
    async createInvoiceDraft(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const buyer = buyerIn(req.buyer);
      const draft = await s.invoices.createDraft(
        propertyId,
        actor,
        {
          folioId: req.folioId,
          ...(buyer !== undefined ? { buyer } : {}),
        },
        keyedOf(ctx),
      );
      return { invoice: invoiceOut(draft) };
    },
    async finalizeInvoice(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      return {
        invoice: invoiceOut(await s.invoices.finalize(propertyId, actor, { invoiceId: req.invoiceId }, keyedOf(ctx))),
      };
    },
    async createReturnInvoiceDraft(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const draft = await s.invoices.createReturnDraft(
        propertyId,
        actor,
        {
          invoiceId: req.invoiceId,
          lineNos: req.lineNos,
        },
        keyedOf(ctx),
      );
      return { invoice: invoiceOut(draft) };
    },
    async requeueInvoiceDelivery(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      return {
        invoice: invoiceOut(
          await s.invoices.requeueDelivery(propertyId, actor, { invoiceId: req.invoiceId }, keyedOf(ctx)),
        ),
      };
    },
    async cancelInvoice(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const cancelled = await s.invoices.cancel(
        propertyId,
        actor,
        { invoiceId: req.invoiceId, reason: req.reason },
        keyedOf(ctx),
      );
      return { invoice: invoiceOut(cancelled) };
    },
    async getInvoice(req, ctx) {
      const { propertyId } = scope(ctx);
      return { invoice: invoiceOut(await s.invoices.getInvoice(propertyId, req.invoiceId)) };
    },
    async getInvoiceDocument(req, ctx) {
      const { propertyId } = scope(ctx);
      const doc = await s.invoices.getDocument(propertyId, { invoiceId: req.invoiceId, format: req.format });
      return { contentType: doc.contentType, content: doc.content, fileName: doc.fileName };
    },
    async setInvoiceTaxRate(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const row = await s.invoices.setTaxRate(
        propertyId,
        actor,
        {
          chargeCode: req.chargeCode,
          validFrom: req.validFrom,
          vatRateBp: req.vatRateBp,
          vatExemptionCode: req.vatExemptionCode,
          accommodationTaxRateBp: req.accommodationTaxRateBp,
        },
        keyedOf(ctx),
      );
      return { ...row, vatExemptionCode: row.vatExemptionCode ?? "" };
    },
    async setInvoiceIssuer(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const issuer = await s.invoices.setIssuer(
        propertyId,
        actor,
        {
          vkn: req.vkn,
          title: req.title,
          taxOffice: req.taxOffice,
          address: addressIn(req.address),
        },
        keyedOf(ctx),
      );
      return { ...issuer, address: { ...issuer.address } };
    },
    async getNightAuditChecks(req, ctx) {
      const { propertyId } = scope(ctx);
      const res = await s.nightAudit.getChecks(propertyId);
      return {
        businessDate: res.businessDate,
        checks: res.checks.map(checkOut),
        canRun: res.canRun,
        unchargedNights: res.unchargedNights.map(unchargedOut),
      };
    },
    async runNightAudit(req, ctx) {
      const { propertyId, actor } = scope(ctx);
      const res = await s.nightAudit.run(
        propertyId,
        actor,
        { expectedBusinessDate: req.expectedBusinessDate },
        keyedOf(ctx),
      );
      return {
        previousBusinessDate: res.previousBusinessDate,
        businessDate: res.businessDate,
        summary: {
          ...res.summary,
          checks: res.summary.checks.map(checkOut),
          unchargedNights: res.summary.unchargedNights.map(unchargedOut),
        },
      };
    },
  });
}
