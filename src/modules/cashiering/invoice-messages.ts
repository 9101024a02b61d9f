import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { InvoiceStatus, type InvoiceAddress, type InvoiceBuyer } from "../../../gen/hotelops/folio/v1/folio_pb.js";
import { invalidField } from "../../errors.ts";
import type { Address, Buyer, BuyerInput, Delivery, Invoice, InvoiceItem } from "../invoices/index.ts";

/** Invoice messages of FolioService <-> the invoices module's types. */
const addressOut = (a: Address) => ({ ...a });

const addressIn = (a: InvoiceAddress | undefined): Partial<Address> => ({
  street: a?.street ?? "",
  district: a?.district ?? "",
  city: a?.city ?? "",
  postalZone: a?.postalZone ?? "",
  countryCode: a?.countryCode ?? "",
});

function buyerOut(b: Buyer) {
  return b.kind === "PERSON"
    ? { kind: b.kind, tckn: b.tckn, firstName: b.firstName, familyName: b.familyName, address: addressOut(b.address) }
    : {
        kind: b.kind,
        vkn: b.vkn,
        title: b.title,
        taxOffice: b.taxOffice,
        address: addressOut(b.address),
        eFatura: b.eFatura,
        eFaturaProfile: b.eFatura ? (b.eFaturaProfile ?? "TEMELFATURA") : "",
      };
}

export function buyerIn(b: InvoiceBuyer | undefined): BuyerInput | undefined {
  if (b === undefined) return undefined;
  if (b.kind === "PERSON")
    return {
      kind: "PERSON",
      tckn: b.tckn,
      firstName: b.firstName,
      familyName: b.familyName,
      address: addressIn(b.address),
    };
  if (b.kind === "COMPANY")
    return {
      kind: "COMPANY",
      vkn: b.vkn,
      title: b.title,
      taxOffice: b.taxOffice,
      address: addressIn(b.address),
      eFatura: b.eFatura,
      eFaturaProfile: b.eFaturaProfile,
    };
  throw invalidField("buyer.kind", "must be PERSON or COMPANY", "validation_failed");
}

export { addressIn };

const lineOut = (i: InvoiceItem) => ({
  lineNo: i.lineNo,
  chargeCode: i.chargeCode,
  description: i.description,
  unitCode: i.unitCode,
  quantity: i.quantity,
  unitPriceMinor: i.unitPriceMinor,
  discountMinor: i.discountMinor,
  totalMinor: i.grossMinor,
  netMinor: i.netMinor,
  vatRateBp: i.vatRateBp,
  vatMinor: i.vatMinor,
  vatExemptionCode: i.vatExemptionCode ?? "",
  accommodationTaxRateBp: i.accommodationTaxRateBp,
  accommodationTaxMinor: i.accommodationTaxMinor,
});

const statusOut = { DRAFT: InvoiceStatus.DRAFT, ISSUED: InvoiceStatus.ISSUED, CANCELLED: InvoiceStatus.CANCELLED };

const deliveryOut = (d: Delivery) => ({
  status: d.status,
  attempts: d.attempts,
  lastError: d.lastError ?? "",
  reason: d.reason ?? "",
  queuedAt: timestampFromDate(d.queuedAt),
  ...(d.sentAt !== null ? { sentAt: timestampFromDate(d.sentAt) } : {}),
  ...(d.decidedAt !== null ? { decidedAt: timestampFromDate(d.decidedAt) } : {}),
});

export const invoiceOut = (i: Invoice) => ({
  id: i.id,
  folioId: i.folioId,
  status: statusOut[i.status],
  type: i.type,
  ...(i.series !== null ? { series: i.series } : {}),
  ...(i.number !== null ? { number: i.number } : {}),
  ...(i.issueDate !== null ? { issueDate: i.issueDate } : {}),
  netMinor: i.netMinor,
  taxMinor: i.taxMinor,
  accommodationTaxMinor: i.accommodationTaxMinor,
  totalMinor: i.totalMinor,
  vatRateBp: i.vatRateBp,
  accommodationTaxRateBp: i.accommodationTaxRateBp,
  currency: i.currency,
  amountScale: i.amountScale,
  chargeIds: i.chargeIds,
  createdAt: timestampFromDate(i.createdAt),
  ...(i.issuedAt !== null ? { issuedAt: timestampFromDate(i.issuedAt) } : {}),
  profileId: i.profileId ?? "",
  typeCode: i.typeCode,
  ...(i.buyer !== null ? { buyer: buyerOut(i.buyer) } : {}),
  ...(i.ettn !== null ? { ettn: i.ettn } : {}),
  lines: i.items.map(lineOut),
  ...(i.delivery !== null ? { delivery: deliveryOut(i.delivery) } : {}),
  ...(i.returnOf !== null ? { returnOfInvoiceId: i.returnOf } : {}),
  ...(i.cancelledAt !== null ? { cancelledAt: timestampFromDate(i.cancelledAt) } : {}),
  cancelReason: i.cancelReason ?? "",
});
