import { Migration } from "@mikro-orm/migrations";

/**
 * Refunds and the night audit's uncharged nights.
 *
 * - A payment may be refunded in several parts: `folio_payments.reversed_payment_id` is no longer unique (a full
 *   reversal is the refund of what is left). The service keeps the refunds of a payment within it under the folio's
 *   row lock; the index finds a payment's refunds.
 * - `night_audit_uncharged_nights`: room nights the night audit could not charge (a price or a folio balance beyond
 *   the money bound), one row per room line and night, owned by the night-audit module. Every audit tries them again
 *   and deletes the rows it posts; the pre-checks list them.
 */
export class Migration0026RefundsAndUnchargedNights extends Migration {
  override name = "0026-refunds-and-uncharged-nights";

  override up(): void {
    this.addSql(`
alter table folio_payments drop constraint folio_payments_reversed_payment_id_key;
create index folio_payments_refunds on folio_payments (reversed_payment_id) where reversed_payment_id is not null;

create table night_audit_uncharged_nights (
  property_id uuid not null references properties(id),
  reservation_room_id uuid not null references reservation_rooms(id),
  reservation_id uuid not null,
  -- copied from the reservation (codes never change), so the checks can name the stay
  reservation_code text not null,
  business_date date not null,
  reason text not null,
  recorded_at timestamptz not null,
  primary key (property_id, reservation_room_id, business_date)
);
`);
  }
}
