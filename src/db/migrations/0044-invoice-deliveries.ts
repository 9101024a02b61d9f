import { Migration } from "@mikro-orm/migrations";

/**
 * Sending invoices as e-documents, return invoices and e-Arşiv cancellation (all tables owned by the invoices module).
 *
 * - invoice_deliveries: one row per issued e-document, keyed by its ETTN: QUEUED (written in the issuing
 *   transaction with its pg-boss job) -> SENT (the integrator has it) -> ACCEPTED / REJECTED; CANCELLING ->
 *   CANCELLED when an e-Arşiv invoice is cancelled. `attempts` counts uploads started, `last_error` keeps the last
 *   transport error, `reason` the integrator's rejection.
 * - invoice_returns: which lines of which invoice a return invoice (IADE) returns; a line is returned at most once.
 * - invoices: status CANCELLED (an e-Arşiv invoice cancelled within its window; it keeps its number), the invoice a
 *   return invoice returns (`return_of`), and who cancelled when and why.
 */
export class Migration0044InvoiceDeliveries extends Migration {
  override name = "0044-invoice-deliveries";

  override up(): void {
    this.addSql(`
do $$
declare c record;
begin
  for c in select conname from pg_constraint
    where conrelid = 'invoices'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%ISSUED%'
  loop
    execute format('alter table invoices drop constraint %I', c.conname);
  end loop;
end $$;
alter table invoices add constraint invoices_status_check check (status in ('DRAFT', 'ISSUED', 'CANCELLED'));
alter table invoices add constraint invoices_issued_check check ((status <> 'DRAFT') =
  (number is not null and series is not null and issue_date is not null and issued_at is not null));
alter table invoices add column return_of uuid references invoices(id);
alter table invoices add column cancelled_at timestamptz;
alter table invoices add column cancelled_by text;
alter table invoices add column cancel_reason text;
alter table invoices add constraint invoices_cancelled_check check ((status = 'CANCELLED') = (cancelled_at is not null));

create table invoice_deliveries (
  invoice_id uuid not null references invoices(id),
  property_id uuid not null references properties(id),
  ettn uuid not null unique,
  status text not null check (status in ('QUEUED', 'SENT', 'ACCEPTED', 'REJECTED', 'CANCELLING', 'CANCELLED')),
  attempts integer not null default 0 check (attempts >= 0),
  last_error text,
  reason text,
  queued_at timestamptz not null,
  sent_at timestamptz,
  decided_at timestamptz,
  updated_at timestamptz not null,
  primary key (property_id, invoice_id)
);

create table invoice_returns (
  property_id uuid not null references properties(id),
  original_invoice_id uuid not null references invoices(id),
  original_line_no integer not null,
  return_invoice_id uuid not null references invoices(id),
  primary key (property_id, original_invoice_id, original_line_no)
);
create index invoice_returns_return on invoice_returns (property_id, return_invoice_id);
    `);
  }
}
