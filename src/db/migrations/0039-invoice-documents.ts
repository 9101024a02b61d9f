import { Migration } from "@mikro-orm/migrations";

/**
 * Invoices to the Turkish e-document standard (all tables owned by the invoices module).
 *
 * - invoice_items: the lines of an invoice as the document shows them, each with its own VAT rate (or a GİB
 *   exemption code at 0 %), its accommodation tax, quantity, tax-inclusive unit price and discount; the split
 *   columns add up per line (`net + vat + accommodation tax = gross`), so the invoice's totals add up too.
 *   invoice_lines stays the list of folio charges the invoice covers.
 * - invoice_tax_rates: the rates of a charge code from `valid_from` until the next row of the same code
 *   (rates change by decree); a code without a row takes the property's rates (accommodation tax on ROOM only).
 * - invoice_issuers: the seller as the documents name it (VKN, title, tax office, address), one per property.
 * - invoice_documents: the UBL-TR XML made when the invoice is issued, with its ETTN.
 * - invoices: the buyer (a person by TCKN or a company by VKN), the e-document profile and type code.
 * Invoices issued before carry no items or document.
 */
export class Migration0039InvoiceDocuments extends Migration {
  override name = "0039-invoice-documents";

  override up(): void {
    this.addSql(`
alter table invoices drop constraint invoices_type_check;
alter table invoices add constraint invoices_type_check check (type in ('E_ARSIV', 'E_FATURA'));
alter table invoices add column profile_id text check (profile_id in ('EARSIVFATURA', 'TEMELFATURA', 'TICARIFATURA'));
alter table invoices add column type_code text not null default 'SATIS' check (type_code in ('SATIS', 'IADE'));
alter table invoices add column buyer jsonb;

create table invoice_items (
  invoice_id uuid not null references invoices(id),
  property_id uuid not null references properties(id),
  line_no integer not null check (line_no >= 1),
  charge_code text not null,
  description text not null,
  unit_code text not null,
  quantity integer not null check (quantity >= 1),
  unit_price_minor bigint not null,
  discount_minor bigint not null default 0 check (discount_minor >= 0),
  gross_minor bigint not null,
  net_minor bigint not null,
  vat_rate_bp integer not null,
  vat_minor bigint not null,
  vat_exemption_code text,
  accommodation_tax_rate_bp integer not null,
  accommodation_tax_minor bigint not null,
  primary key (property_id, invoice_id, line_no),
  check (gross_minor = quantity * unit_price_minor - discount_minor),
  check (net_minor + vat_minor + accommodation_tax_minor = gross_minor),
  check ((vat_rate_bp = 0) = (vat_exemption_code is not null))
);

create table invoice_tax_rates (
  property_id uuid not null references properties(id),
  charge_code text not null,
  valid_from date not null,
  vat_rate_bp integer not null check (vat_rate_bp in (0, 100, 1000, 2000)),
  vat_exemption_code text,
  accommodation_tax_rate_bp integer not null check (accommodation_tax_rate_bp between 0 and 10000),
  created_at timestamptz not null,
  created_by text not null,
  primary key (property_id, charge_code, valid_from),
  check ((vat_rate_bp = 0) = (vat_exemption_code is not null))
);

create table invoice_issuers (
  property_id uuid primary key references properties(id),
  vkn text not null,
  title text not null,
  tax_office text not null,
  street text not null,
  district text not null,
  city text not null,
  postal_zone text not null default '',
  country_code char(2) not null,
  updated_at timestamptz not null
);

create table invoice_documents (
  invoice_id uuid not null references invoices(id),
  property_id uuid not null references properties(id),
  ettn uuid not null,
  issue_time text not null,
  xml text not null,
  created_at timestamptz not null,
  primary key (property_id, invoice_id),
  unique (property_id, ettn)
);
    `);
  }
}
