import { Migration } from "@mikro-orm/migrations";

/**
 * Several folios per reservation and the city ledger.
 *
 * - A reservation's folios are numbered by `window_no` (1 is the default folio every existing call uses; 2..9 are
 *   opened by CreateFolio, e.g. the company pays the room on one, the guest the extras on another).
 * - `folio_routing_rules`: a charge code of a reservation goes to one of its windows when it posts (the night
 *   audit's ROOM nights included).
 * - A CREDIT line is a negative folio charge written when a return invoice (IADE) is issued: it carries the
 *   return's invoice id and lowers the folio's balance by the returned total. Cancelling the return writes its
 *   CREDIT_REVERSAL (positive, the same invoice id). Neither is ever drafted, released or moved.
 * - `ledger_accounts` (companies, agencies) with a credit limit and a stored balance; `ledger_items` are the
 *   account's ledger: FOLIO debits (a folio's balance settled to the account) and PAYMENT credits, each with what is
 *   still open; `ledger_allocations` record which payment paid which debit. balance = sum(open debits) -
 *   sum(open payments), kept by the statements that change them.
 */
export class Migration0049FolioWindowsAndCityLedger extends Migration {
  override name = "0049-folio-windows-and-city-ledger";

  override up(): void {
    this.addSql(`
alter table folios add column window_no integer not null default 1 check (window_no between 1 and 9);
alter table folios add column name text not null default '';
alter table folios drop constraint folios_property_id_reservation_id_key;
alter table folios add constraint folios_reservation_window unique (property_id, reservation_id, window_no);

alter table folio_charges drop constraint folio_charges_kind_check;
alter table folio_charges drop constraint folio_charges_amount_minor_check;
alter table folio_charges add constraint folio_charges_kind_check check (kind in ('ROOM', 'EXTRA', 'CREDIT', 'CREDIT_REVERSAL'));
alter table folio_charges add constraint folio_charges_amount_sign check (
  amount_minor <> 0 and (kind = 'CREDIT') = (amount_minor < 0) and (kind in ('ROOM', 'EXTRA') or invoice_id is not null));

create table folio_routing_rules (
  property_id uuid not null references properties(id),
  reservation_id uuid not null,
  charge_code text not null,
  window_no integer not null check (window_no between 1 and 9),
  created_at timestamptz not null,
  primary key (property_id, reservation_id, charge_code),
  foreign key (property_id, reservation_id) references reservations (property_id, id)
);

create table ledger_accounts (
  property_id uuid not null references properties(id),
  id uuid not null,
  code text not null,
  name text not null,
  kind text not null check (kind in ('COMPANY', 'AGENCY')),
  credit_limit_minor bigint not null check (credit_limit_minor >= 0),
  balance_minor bigint not null default 0,
  currency char(3) not null,
  amount_scale integer not null,
  created_at timestamptz not null,
  primary key (property_id, id),
  unique (property_id, code)
);

create table ledger_items (
  property_id uuid not null references properties(id),
  id uuid not null,
  account_id uuid not null,
  kind text not null check (kind in ('FOLIO', 'PAYMENT')),
  folio_id uuid references folios(id),
  amount_minor bigint not null check (amount_minor > 0),
  open_minor bigint not null check (open_minor >= 0 and open_minor <= amount_minor),
  business_date date not null,
  method_code text not null default '',
  reference text not null default '',
  posted_at timestamptz not null,
  posted_by text not null,
  primary key (property_id, id),
  foreign key (property_id, account_id) references ledger_accounts (property_id, id),
  check ((kind = 'FOLIO') = (folio_id is not null))
);
create index ledger_items_account on ledger_items (property_id, account_id, business_date, id);
create index ledger_items_open on ledger_items (property_id, business_date) where open_minor > 0;

create table ledger_allocations (
  property_id uuid not null references properties(id),
  payment_item_id uuid not null,
  debit_item_id uuid not null,
  amount_minor bigint not null check (amount_minor > 0),
  allocated_at timestamptz not null,
  primary key (property_id, payment_item_id, debit_item_id),
  foreign key (property_id, payment_item_id) references ledger_items (property_id, id),
  foreign key (property_id, debit_item_id) references ledger_items (property_id, id)
);

update roles set permissions = array_append(permissions, 'accounts.manage')
  where code in ('manager', 'accountant') and not ('accounts.manage' = any(permissions));
`);
  }
}
