import type { Buyer } from "./buyer.ts";
import type { Issuer } from "./documents.repository.ts";
import { invoiceTotals, undiscountedNet, type InvoiceItem } from "./lines.ts";

/**
 * The UBL-TR 1.2 XML of an issued invoice (UBL 2.1 with GİB's customisation `TR1.2`): ETTN as `cbc:UUID`, the
 * 16-character number as `cbc:ID`, the profile (EARSIVFATURA for consumers and companies outside e-Fatura,
 * TEMELFATURA or TICARIFATURA for e-Fatura buyers), the type code (SATIS, IADE), the parties, one `cac:InvoiceLine` per line with
 * its own VAT (KDV, tax type 0015, exemption code at 0 %) and accommodation tax (konaklama vergisi, 0059),
 * one `cac:TaxTotal` with a `cac:TaxSubtotal` per rate, and `cac:LegalMonetaryTotal`. Element order follows the
 * UBL 2.1 schemas; tests validate every kind of document against them and against GİB's UBL-TR schematron rules
 * (a 0 % VAT carries the exemption's code and text; a return names the returned invoice with document type IADE).
 * The XAdES signature in `ext:UBLExtensions` is the integrator's to add; the document names the seller as
 * signatory in `cac:Signature`.
 */
export interface UblInput {
  number: string;
  ettn: string;
  profileId: "EARSIVFATURA" | "TEMELFATURA" | "TICARIFATURA";
  typeCode: "SATIS" | "IADE";
  issueDate: string;
  /** HH:MM:SS, Turkish time. */
  issueTime: string;
  currency: string;
  amountScale: number;
  issuer: Issuer;
  buyer: Buyer;
  items: readonly InvoiceItem[];
  /** For IADE: the invoice returned. */
  returnOf?: { number: string; issueDate: string };
}

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/** Minor units as a decimal with the currency's digits (scale 100: 12345 -> 123.45). */
export function formatAmount(minor: bigint, amountScale: number): string {
  const digits = Math.round(Math.log10(amountScale));
  const neg = minor < 0n;
  const abs = (neg ? -minor : minor).toString().padStart(digits + 1, "0");
  const whole = digits === 0 ? abs : abs.slice(0, -digits);
  const frac = digits === 0 ? "" : `.${abs.slice(-digits)}`;
  return `${neg ? "-" : ""}${whole}${frac}`;
}

/** Basis points as a percent (1000 -> 10, 250 -> 2.5). */
export function formatPercent(bp: number): string {
  return (bp / 100).toString();
}

/** A unit price that may not be a whole number of minor units: net / quantity with up to 8 decimals. */
function unitPrice(netMinor: bigint, quantity: number, amountScale: number): string {
  const factor = 10n ** 8n;
  const q = (netMinor * factor * 2n + BigInt(quantity)) / (2n * BigInt(quantity)); // rounded half up, net >= 0
  const digits = Math.round(Math.log10(amountScale)) + 8;
  const s = q.toString().padStart(digits + 1, "0");
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`.replace(/0+$/, "").replace(/\.$/, "");
}

export function renderUblTr(d: UblInput): string {
  const amt = (minor: bigint, tag: string) =>
    `<cbc:${tag} currencyID="${esc(d.currency)}">${formatAmount(minor, d.amountScale)}</cbc:${tag}>`;
  const totals = invoiceTotals(d.items);
  const out: string[] = [];
  out.push(`<?xml version="1.0" encoding="UTF-8"?>`);
  out.push(
    `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">`,
  );
  out.push(`<cbc:UBLVersionID>2.1</cbc:UBLVersionID>`, `<cbc:CustomizationID>TR1.2</cbc:CustomizationID>`);
  out.push(`<cbc:ProfileID>${d.profileId}</cbc:ProfileID>`, `<cbc:ID>${esc(d.number)}</cbc:ID>`);
  out.push(`<cbc:CopyIndicator>false</cbc:CopyIndicator>`, `<cbc:UUID>${esc(d.ettn)}</cbc:UUID>`);
  out.push(`<cbc:IssueDate>${d.issueDate}</cbc:IssueDate>`, `<cbc:IssueTime>${d.issueTime}</cbc:IssueTime>`);
  out.push(`<cbc:InvoiceTypeCode>${d.typeCode}</cbc:InvoiceTypeCode>`);
  out.push(`<cbc:DocumentCurrencyCode>${esc(d.currency)}</cbc:DocumentCurrencyCode>`);
  out.push(`<cbc:LineCountNumeric>${d.items.length}</cbc:LineCountNumeric>`);
  if (d.returnOf !== undefined) {
    out.push(
      `<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${esc(d.returnOf.number)}</cbc:ID>` +
        `<cbc:IssueDate>${d.returnOf.issueDate}</cbc:IssueDate><cbc:DocumentTypeCode>IADE</cbc:DocumentTypeCode>` +
        `</cac:InvoiceDocumentReference></cac:BillingReference>`,
    );
  }
  out.push(
    `<cac:Signature><cbc:ID schemeID="VKN_TCKN">${esc(d.issuer.vkn)}</cbc:ID><cac:SignatoryParty>` +
      `<cac:PartyIdentification><cbc:ID schemeID="VKN">${esc(d.issuer.vkn)}</cbc:ID></cac:PartyIdentification>` +
      address(d.issuer.address) +
      `</cac:SignatoryParty><cac:DigitalSignatureAttachment><cac:ExternalReference><cbc:URI>#Signature_${esc(d.number)}</cbc:URI>` +
      `</cac:ExternalReference></cac:DigitalSignatureAttachment></cac:Signature>`,
  );
  out.push(`<cac:AccountingSupplierParty>${supplierParty(d.issuer)}</cac:AccountingSupplierParty>`);
  out.push(`<cac:AccountingCustomerParty>${customerParty(d.buyer)}</cac:AccountingCustomerParty>`);
  out.push(`<cac:TaxTotal>${amt(totals.vatMinor + totals.accommodationTaxMinor, "TaxAmount")}`);
  for (const r of totals.vatByRate) {
    out.push(
      `<cac:TaxSubtotal>${amt(r.taxableMinor, "TaxableAmount")}${amt(r.taxMinor, "TaxAmount")}<cbc:Percent>${formatPercent(r.vatRateBp)}</cbc:Percent>` +
        `<cac:TaxCategory>${exemption(r.vatExemptionCode)}${vatScheme}</cac:TaxCategory></cac:TaxSubtotal>`,
    );
  }
  for (const r of totals.accommodationByRate) {
    out.push(
      `<cac:TaxSubtotal>${amt(r.taxableMinor, "TaxableAmount")}${amt(r.taxMinor, "TaxAmount")}<cbc:Percent>${formatPercent(r.rateBp)}</cbc:Percent>` +
        `<cac:TaxCategory>${accommodationScheme}</cac:TaxCategory></cac:TaxSubtotal>`,
    );
  }
  out.push(`</cac:TaxTotal>`);
  out.push(
    `<cac:LegalMonetaryTotal>${amt(totals.netMinor, "LineExtensionAmount")}${amt(totals.netMinor, "TaxExclusiveAmount")}` +
      `${amt(totals.totalMinor, "TaxInclusiveAmount")}${amt(totals.totalMinor, "PayableAmount")}</cac:LegalMonetaryTotal>`,
  );
  for (const it of d.items) {
    const net0 = undiscountedNet(it);
    const lineTaxes =
      `<cac:TaxSubtotal>${amt(it.netMinor, "TaxableAmount")}${amt(it.vatMinor, "TaxAmount")}<cbc:Percent>${formatPercent(it.vatRateBp)}</cbc:Percent>` +
      `<cac:TaxCategory>${exemption(it.vatExemptionCode)}${vatScheme}</cac:TaxCategory></cac:TaxSubtotal>` +
      (it.accommodationTaxRateBp > 0
        ? `<cac:TaxSubtotal>${amt(it.netMinor, "TaxableAmount")}${amt(it.accommodationTaxMinor, "TaxAmount")}` +
          `<cbc:Percent>${formatPercent(it.accommodationTaxRateBp)}</cbc:Percent><cac:TaxCategory>${accommodationScheme}</cac:TaxCategory></cac:TaxSubtotal>`
        : "");
    out.push(
      `<cac:InvoiceLine><cbc:ID>${it.lineNo}</cbc:ID>` +
        `<cbc:InvoicedQuantity unitCode="${it.unitCode}">${it.quantity}</cbc:InvoicedQuantity>${amt(it.netMinor, "LineExtensionAmount")}` +
        (it.discountMinor > 0n
          ? `<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator>${amt(net0 - it.netMinor, "Amount")}${amt(net0, "BaseAmount")}</cac:AllowanceCharge>`
          : "") +
        `<cac:TaxTotal>${amt(it.vatMinor + it.accommodationTaxMinor, "TaxAmount")}${lineTaxes}</cac:TaxTotal>` +
        `<cac:Item><cbc:Name>${esc(it.description)}</cbc:Name><cac:SellersItemIdentification><cbc:ID>${esc(it.chargeCode)}</cbc:ID></cac:SellersItemIdentification></cac:Item>` +
        `<cac:Price><cbc:PriceAmount currencyID="${esc(d.currency)}">${unitPrice(net0, it.quantity, d.amountScale)}</cbc:PriceAmount></cac:Price>` +
        `</cac:InvoiceLine>`,
    );
  }
  out.push(`</Invoice>`);
  return out.join("\n") + "\n";
}

const vatScheme = `<cac:TaxScheme><cbc:Name>KDV</cbc:Name><cbc:TaxTypeCode>0015</cbc:TaxTypeCode></cac:TaxScheme>`;
const accommodationScheme = `<cac:TaxScheme><cbc:Name>KONAKLAMA VERGİSİ</cbc:Name><cbc:TaxTypeCode>0059</cbc:TaxTypeCode></cac:TaxScheme>`;

/** GİB's wording of the exemption codes the service issues (settings.ts accepts only these on SATIS and IADE). */
const EXEMPTION_REASONS: Record<string, string> = { "351": "KDV - İstisna Olmayan Diğer" };

/** GİB's rules want the reason's text beside the code on a 0 % VAT (TaxExemptionReasonCheck). */
function exemption(code: string | null): string {
  if (code === null) return "";
  const reason = EXEMPTION_REASONS[code] ?? `KDV istisnası (GİB kodu ${code})`;
  return `<cbc:TaxExemptionReasonCode>${esc(code)}</cbc:TaxExemptionReasonCode><cbc:TaxExemptionReason>${esc(reason)}</cbc:TaxExemptionReason>`;
}

function address(a: Issuer["address"]): string {
  return (
    `<cac:PostalAddress>${a.street !== "" ? `<cbc:StreetName>${esc(a.street)}</cbc:StreetName>` : ""}` +
    `<cbc:CitySubdivisionName>${esc(a.district)}</cbc:CitySubdivisionName><cbc:CityName>${esc(a.city)}</cbc:CityName>` +
    `${a.postalZone !== "" ? `<cbc:PostalZone>${esc(a.postalZone)}</cbc:PostalZone>` : ""}` +
    `<cac:Country><cbc:IdentificationCode>${esc(a.countryCode)}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>`
  );
}

function taxOffice(name: string): string {
  return `<cac:PartyTaxScheme><cac:TaxScheme><cbc:Name>${esc(name)}</cbc:Name></cac:TaxScheme></cac:PartyTaxScheme>`;
}

function supplierParty(i: Issuer): string {
  return (
    `<cac:Party><cac:PartyIdentification><cbc:ID schemeID="VKN">${esc(i.vkn)}</cbc:ID></cac:PartyIdentification>` +
    `<cac:PartyName><cbc:Name>${esc(i.title)}</cbc:Name></cac:PartyName>${address(i.address)}${taxOffice(i.taxOffice)}</cac:Party>`
  );
}

function customerParty(b: Buyer): string {
  if (b.kind === "COMPANY") {
    return (
      `<cac:Party><cac:PartyIdentification><cbc:ID schemeID="VKN">${esc(b.vkn)}</cbc:ID></cac:PartyIdentification>` +
      `<cac:PartyName><cbc:Name>${esc(b.title)}</cbc:Name></cac:PartyName>${address(b.address)}${taxOffice(b.taxOffice)}</cac:Party>`
    );
  }
  return (
    `<cac:Party><cac:PartyIdentification><cbc:ID schemeID="TCKN">${esc(b.tckn)}</cbc:ID></cac:PartyIdentification>` +
    `${address(b.address)}<cac:Person><cbc:FirstName>${esc(b.firstName)}</cbc:FirstName>` +
    `<cbc:FamilyName>${esc(b.familyName)}</cbc:FamilyName></cac:Person></cac:Party>`
  );
}
