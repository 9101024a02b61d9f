import { Migration } from "@mikro-orm/migrations";

/**
 * Folios, charges, payments, invoices and their counters.
 *
 * - One folio per reservation; its number is unique per property (folio_counters, one row per property).
 * - Charges and payments are a ledger: rows are only ever inserted. A payment is undone by a reversal, a
 *   negative payment pointing at the original (`reversed_payment_id`, unique: a payment is reversed once).
 *   Balance = sum(charges) - sum(payments, reversals included). Amounts are bigint minor units of the folio's
 *   currency with the property's amount_scale.
 * - A room charge is posted once per room line and night (partial unique index), so a repeated or
 *   concurrent night audit can never charge a night twice.
 * - Invoices: a DRAFT snapshots the folio's uninvoiced charges; finalizing sets the charges' invoice_id,
 *   takes the next number from invoice_counters (row locked FOR UPDATE in the same transaction: gapless,
 *   per property and year; never a sequence, whose values are lost on rollback) and makes it ISSUED.
 */
export class Migration0007Folio extends Migration {
  override name = "0007-folio";

  override up(): void {
    this.addSql(`
create table folio_counters (
  property_id uuid primary key references properties(id),
  last_number bigint not null check (last_number >= 0)
);

create table folios (
  id uuid primary key,
  property_id uuid not null references properties(id),
  reservation_id uuid not null,
  -- Copied from the reservation when the folio opens (codes never change); events carry it.
  reservation_code text not null,
  number text not null,
  currency char(3) not null,
  amount_scale integer not null,
  created_at timestamptz not null,
  unique (property_id, number),
  unique (property_id, reservation_id),
  foreign key (property_id, reservation_id) references reservations (property_id, id)
);

create table invoices (
  id uuid primary key,
  property_id uuid not null references properties(id),
  folio_id uuid not null references folios(id),
  status text not null check (status in ('DRAFT', 'ISSUED')),
  type text not null check (type in ('E_ARSIV')),
  series char(3),
  number text,
  issue_date date,
  net_minor bigint not null,
  tax_minor bigint not null,
  accommodation_tax_minor bigint not null,
  total_minor bigint not null check (net_minor + tax_minor + accommodation_tax_minor = total_minor),
  vat_rate_bp integer not null,
  accommodation_tax_rate_bp integer not null,
  currency char(3) not null,
  amount_scale integer not null,
  created_at timestamptz not null,
  created_by text not null,
  issued_at timestamptz,
  issued_by text,
  unique (property_id, number),
  check ((status = 'ISSUED') = (number is not null and series is not null and issue_date is not null and issued_at is not null))
);
create index invoices_folio on invoices (property_id, folio_id);

create table folio_charges (
  id uuid primary key,
  property_id uuid not null references properties(id),
  folio_id uuid not null references folios(id),
  kind text not null check (kind in ('ROOM', 'EXTRA')),
  code text not null,
  description text not null,
  amount_minor bigint not null check (amount_minor > 0),
  business_date date not null,
  reservation_room_id uuid references reservation_rooms(id),
  invoice_id uuid references invoices(id),
  posted_at timestamptz not null,
  posted_by text not null,
  check ((kind = 'ROOM') = (reservation_room_id is not null))
);
create index folio_charges_folio on folio_charges (property_id, folio_id);
create unique index folio_charges_room_night on folio_charges (property_id, reservation_room_id, business_date) where kind = 'ROOM';

create table folio_payments (
  id uuid primary key,
  property_id uuid not null references properties(id),
  folio_id uuid not null references folios(id),
  amount_minor bigint not null check (amount_minor <> 0),
  method_code text not null,
  method_kind text not null,
  reference text not null default '',
  reversed_payment_id uuid unique references folio_payments(id),
  business_date date not null,
  posted_at timestamptz not null,
  posted_by text not null,
  check ((reversed_payment_id is null) = (amount_minor > 0))
);
create index folio_payments_folio on folio_payments (property_id, folio_id);

create table invoice_lines (
  invoice_id uuid not null references invoices(id),
  charge_id uuid not null references folio_charges(id),
  property_id uuid not null references properties(id),
  primary key (invoice_id, charge_id)
);

create table invoice_counters (
  property_id uuid not null references properties(id),
  year integer not null,
  series char(3) not null,
  last_number bigint not null check (last_number >= 0),
  primary key (property_id, year)
);
    `);
  }
}
