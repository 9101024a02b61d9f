import { AppError } from "../../errors.ts";
import type { Tx } from "../../db/transaction.ts";
import type { ChargeRow } from "../folio/index.ts";
import type { PropertyRow } from "../properties/index.ts";
import type { Address } from "./buyer.ts";
import { isValidVkn } from "./tax-ids.ts";
import { taxRatesOf, type Issuer, type TaxRateRow } from "./documents.repository.ts";
import type { LineRates } from "./lines.ts";

/**
 * Tax rates per charge code with validity dates, and the issuer. A charge takes the row of its code with the
 * latest `validFrom` on or before the charge's business date; a code without one takes the property's rates:
 * its VAT rate on every charge and its accommodation tax on room nights (kind ROOM) only. A 0 % VAT without a
 * configured row is exemption 351 (GİB: "KDV - istisna olmayan diğer").
 */
const VAT_RATES_BP = [0, 100, 1000, 2000] as const;
const DEFAULT_EXEMPTION_CODE = "351";
const SATIS_EXEMPTION_CODES: readonly string[] = [DEFAULT_EXEMPTION_CODE];

export interface TaxRateInput {
  chargeCode: string;
  validFrom: string;
  vatRateBp: number;
  vatExemptionCode: string;
  accommodationTaxRateBp: number;
}

const invalid = (field: string, reason: string) =>
  new AppError("validation_failed", `${field}: ${reason}`, { details: [{ field, reason }] });

/**
 * Invoices are issued in Turkish lira only. A UBL-TR document in another currency needs the central bank's rate of
 * the issue date (`cac:PricingExchangeRate`) and the TRY amounts GİB reports on; the service has no source of
 * exchange rates, so a folio kept in another currency is refused rather than issued with a guessed rate.
 */
const INVOICE_CURRENCY = "TRY";

export function requireInvoiceCurrency(currency: string): void {
  if (currency !== INVOICE_CURRENCY)
    throw new AppError(
      "validation_failed",
      `currency: invoices are issued in ${INVOICE_CURRENCY} only; this folio is kept in ${currency}.`,
      { details: [{ field: "currency", reason: `${currency}: only ${INVOICE_CURRENCY} invoices are issued` }] },
    );
}

export function validateTaxRate(i: TaxRateInput): TaxRateRow {
  if (!/^[A-Z0-9_]{1,32}$/.test(i.chargeCode)) throw invalid("chargeCode", "1 to 32 characters A-Z, 0-9 or _");
  if (!/^\d{4}-\d{2}-\d{2}$/.test(i.validFrom) || Number.isNaN(Date.parse(`${i.validFrom}T00:00:00Z`)))
    throw invalid("validFrom", "must be a date YYYY-MM-DD");
  if (!(VAT_RATES_BP as readonly number[]).includes(i.vatRateBp))
    throw invalid("vatRateBp", "must be 0, 100, 1000 or 2000 (0, 1, 10 or 20 %)");
  const code = i.vatExemptionCode.trim();
  if (i.vatRateBp === 0 && !/^\d{3}$/.test(code))
    throw invalid("vatExemptionCode", "a 0 % rate needs GİB's three-digit exemption code");
  // GİB's rules take every other exemption code only on ISTISNA, OZELMATRAH or IHRACKAYITLI invoices, which the
  // service does not issue: a SATIS invoice carrying one would be refused.
  if (i.vatRateBp === 0 && !SATIS_EXEMPTION_CODES.includes(code))
    throw invalid(
      "vatExemptionCode",
      `the invoices issued here (SATIS, IADE) take only ${SATIS_EXEMPTION_CODES.join(", ")}`,
    );
  if (i.vatRateBp !== 0 && code !== "") throw invalid("vatExemptionCode", "only a 0 % rate has an exemption code");
  if (!Number.isInteger(i.accommodationTaxRateBp) || i.accommodationTaxRateBp < 0 || i.accommodationTaxRateBp > 10_000)
    throw invalid("accommodationTaxRateBp", "must be an integer between 0 and 10000");
  return {
    chargeCode: i.chargeCode,
    validFrom: i.validFrom,
    vatRateBp: i.vatRateBp,
    vatExemptionCode: i.vatRateBp === 0 ? code : null,
    accommodationTaxRateBp: i.accommodationTaxRateBp,
  };
}

/** The rate resolver of one draft: configured rows of the charges' codes, the property's rates otherwise. */
export async function ratesResolver(
  tx: Tx,
  property: PropertyRow,
  charges: readonly ChargeRow[],
): Promise<(c: ChargeRow) => LineRates> {
  const rows = await taxRatesOf(tx, property.id, [...new Set(charges.map((c) => c.code))]);
  return (c) => {
    const row = rows.find((r) => r.chargeCode === c.code && r.validFrom <= c.businessDate);
    if (row !== undefined)
      return {
        vatRateBp: row.vatRateBp,
        vatExemptionCode: row.vatExemptionCode,
        accommodationTaxRateBp: row.accommodationTaxRateBp,
      };
    return {
      vatRateBp: property.vatRateBp,
      vatExemptionCode: property.vatRateBp === 0 ? DEFAULT_EXEMPTION_CODE : null,
      accommodationTaxRateBp: c.kind === "ROOM" ? property.accommodationTaxRateBp : 0,
    };
  };
}

export interface IssuerInput {
  vkn: string;
  title: string;
  taxOffice: string;
  address: Partial<Address>;
}

function field(value: string | undefined, name: string, max: number, required = true): string {
  const v = (value ?? "").trim();
  if (required && v === "") throw invalid(name, "is required");
  if (v.length > max) throw invalid(name, `at most ${max} characters`);
  return v;
}

export function validateIssuer(i: IssuerInput): Issuer {
  if (!isValidVkn(i.vkn.trim())) throw invalid("vkn", "not a valid VKN (10 digits with checksum)");
  const countryCode = field(i.address.countryCode, "address.countryCode", 2).toUpperCase();
  if (!/^[A-Z]{2}$/.test(countryCode)) throw invalid("address.countryCode", "must be two letters (ISO 3166)");
  return {
    vkn: i.vkn.trim(),
    title: field(i.title, "title", 250),
    taxOffice: field(i.taxOffice, "taxOffice", 100),
    address: {
      street: field(i.address.street, "address.street", 200),
      district: field(i.address.district, "address.district", 100),
      city: field(i.address.city, "address.city", 100),
      postalZone: field(i.address.postalZone, "address.postalZone", 20, false),
      countryCode,
    },
  };
}
