import type { Tx } from "../../db/transaction.ts";
import type { Address } from "./buyer.ts";
import type { InvoiceItem, LineRates } from "./lines.ts";

/** Persistence of invoice lines, tax rates, the issuer and the e-documents. Every query filters by property id. */
type Raw = Record<string, unknown>;

export async function insertItems(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  items: readonly InvoiceItem[],
): Promise<void> {
  await tx.query(
    `insert into invoice_items (invoice_id, property_id, line_no, charge_code, description, unit_code, quantity, unit_price_minor,
       discount_minor, gross_minor, net_minor, vat_rate_bp, vat_minor, vat_exemption_code, accommodation_tax_rate_bp, accommodation_tax_minor)
     select $1, $2, * from jsonb_to_recordset($3::jsonb) as r(line_no int, charge_code text, description text, unit_code text,
       quantity int, unit_price_minor bigint, discount_minor bigint, gross_minor bigint, net_minor bigint, vat_rate_bp int,
       vat_minor bigint, vat_exemption_code text, accommodation_tax_rate_bp int, accommodation_tax_minor bigint)`,
    [
      invoiceId,
      propertyId,
      JSON.stringify(
        items.map((i) => ({
          line_no: i.lineNo,
          charge_code: i.chargeCode,
          description: i.description,
          unit_code: i.unitCode,
          quantity: i.quantity,
          unit_price_minor: i.unitPriceMinor.toString(),
          discount_minor: i.discountMinor.toString(),
          gross_minor: i.grossMinor.toString(),
          net_minor: i.netMinor.toString(),
          vat_rate_bp: i.vatRateBp,
          vat_minor: i.vatMinor.toString(),
          vat_exemption_code: i.vatExemptionCode,
          accommodation_tax_rate_bp: i.accommodationTaxRateBp,
          accommodation_tax_minor: i.accommodationTaxMinor.toString(),
        })),
      ),
    ],
  );
}

export async function findItems(tx: Tx, propertyId: string, invoiceId: string): Promise<InvoiceItem[]> {
  const rows = await tx.query<Raw>(
    `select line_no, charge_code, description, unit_code, quantity, unit_price_minor::text, discount_minor::text, gross_minor::text,
       net_minor::text, vat_rate_bp, vat_minor::text, vat_exemption_code, accommodation_tax_rate_bp, accommodation_tax_minor::text
     from invoice_items where property_id = $1 and invoice_id = $2 order by line_no`,
    [propertyId, invoiceId],
  );
  return rows.map((r) => ({
    lineNo: r.line_no as number,
    chargeCode: r.charge_code as string,
    description: r.description as string,
    unitCode: r.unit_code as InvoiceItem["unitCode"],
    quantity: r.quantity as number,
    unitPriceMinor: BigInt(r.unit_price_minor as string),
    discountMinor: BigInt(r.discount_minor as string),
    grossMinor: BigInt(r.gross_minor as string),
    netMinor: BigInt(r.net_minor as string),
    vatRateBp: r.vat_rate_bp as number,
    vatMinor: BigInt(r.vat_minor as string),
    vatExemptionCode: (r.vat_exemption_code as string | null) ?? null,
    accommodationTaxRateBp: r.accommodation_tax_rate_bp as number,
    accommodationTaxMinor: BigInt(r.accommodation_tax_minor as string),
  }));
}

export interface TaxRateRow extends LineRates {
  chargeCode: string;
  validFrom: string;
}

/** Every configured rate of the given charge codes, latest first per code. */
export async function taxRatesOf(tx: Tx, propertyId: string, codes: readonly string[]): Promise<TaxRateRow[]> {
  const rows = await tx.query<Raw>(
    `select charge_code, valid_from::text as valid_from, vat_rate_bp, vat_exemption_code, accommodation_tax_rate_bp
     from invoice_tax_rates where property_id = $1 and charge_code = any($2::text[]) order by charge_code, valid_from desc`,
    [propertyId, codes],
  );
  return rows.map((r) => ({
    chargeCode: r.charge_code as string,
    validFrom: r.valid_from as string,
    vatRateBp: r.vat_rate_bp as number,
    vatExemptionCode: (r.vat_exemption_code as string | null) ?? null,
    accommodationTaxRateBp: r.accommodation_tax_rate_bp as number,
  }));
}

export async function upsertTaxRate(tx: Tx, propertyId: string, row: TaxRateRow, at: Date, by: string): Promise<void> {
  await tx.query(
    `insert into invoice_tax_rates (property_id, charge_code, valid_from, vat_rate_bp, vat_exemption_code, accommodation_tax_rate_bp, created_at, created_by)
     values ($1, $2, $3::date, $4, $5, $6, $7, $8)
     on conflict (property_id, charge_code, valid_from) do update set vat_rate_bp = excluded.vat_rate_bp,
       vat_exemption_code = excluded.vat_exemption_code, accommodation_tax_rate_bp = excluded.accommodation_tax_rate_bp,
       created_at = excluded.created_at, created_by = excluded.created_by`,
    [
      propertyId,
      row.chargeCode,
      row.validFrom,
      row.vatRateBp,
      row.vatExemptionCode,
      row.accommodationTaxRateBp,
      at,
      by,
    ],
  );
}

/** The seller as the documents name it. */
export interface Issuer {
  vkn: string;
  title: string;
  taxOffice: string;
  address: Address;
}

export async function findIssuer(tx: Tx, propertyId: string): Promise<Issuer | undefined> {
  const [r] = await tx.query<Raw>(
    `select vkn, title, tax_office, street, district, city, postal_zone, country_code from invoice_issuers where property_id = $1`,
    [propertyId],
  );
  if (r === undefined) return undefined;
  return {
    vkn: r.vkn as string,
    title: r.title as string,
    taxOffice: r.tax_office as string,
    address: {
      street: r.street as string,
      district: r.district as string,
      city: r.city as string,
      postalZone: r.postal_zone as string,
      countryCode: r.country_code as string,
    },
  };
}

export async function upsertIssuer(tx: Tx, propertyId: string, i: Issuer, at: Date): Promise<void> {
  const a = i.address;
  await tx.query(
    `insert into invoice_issuers (property_id, vkn, title, tax_office, street, district, city, postal_zone, country_code, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (property_id) do update set vkn = excluded.vkn, title = excluded.title, tax_office = excluded.tax_office,
       street = excluded.street, district = excluded.district, city = excluded.city, postal_zone = excluded.postal_zone,
       country_code = excluded.country_code, updated_at = excluded.updated_at`,
    [propertyId, i.vkn, i.title, i.taxOffice, a.street, a.district, a.city, a.postalZone, a.countryCode, at],
  );
}

export interface StoredDocument {
  ettn: string;
  issueTime: string;
  xml: string;
}

export async function insertDocument(
  tx: Tx,
  propertyId: string,
  invoiceId: string,
  d: StoredDocument,
  at: Date,
): Promise<void> {
  await tx.query(
    `insert into invoice_documents (invoice_id, property_id, ettn, issue_time, xml, created_at) values ($1, $2, $3, $4, $5, $6)`,
    [invoiceId, propertyId, d.ettn, d.issueTime, d.xml, at],
  );
}

export async function findDocument(tx: Tx, propertyId: string, invoiceId: string): Promise<StoredDocument | undefined> {
  const [r] = await tx.query<Raw>(
    `select ettn::text as ettn, issue_time, xml from invoice_documents where property_id = $1 and invoice_id = $2`,
    [propertyId, invoiceId],
  );
  return r === undefined
    ? undefined
    : { ettn: r.ettn as string, issueTime: r.issue_time as string, xml: r.xml as string };
}

/** The issued document's XML replaced (a REJECTED document re-made after a fix; same ETTN and number). */
export async function replaceDocumentXml(tx: Tx, propertyId: string, invoiceId: string, xml: string): Promise<void> {
  await tx.query(`update invoice_documents set xml = $3 where property_id = $1 and invoice_id = $2`, [
    propertyId,
    invoiceId,
    xml,
  ]);
}
