import { Migration } from "@mikro-orm/migrations";

/**
 * The policy a stay was booked under, and deposits.
 *
 * A room line keeps the cancellation and no-show policy of its rate plan as it stood when the line was booked (or
 * moved to another rate plan): `policy_*` on reservation_rooms, null when the plan had none. A later change of the
 * plan's policy leaves the fees of existing bookings as they were. Lines booked before this migration take the
 * policy their plan has now.
 *
 * A rate plan may ask for a deposit: the first night, basis points of the stay total or a fixed amount per room line
 * (`deposit_kind`, `deposit_value`), due `deposit_due_days` days after the booking (AFTER_BOOKING) or before the
 * arrival (BEFORE_ARRIVAL). A reservation keeps the deposit it owes and its due date from when it was made
 * (`deposit_due_minor` 0 and `deposit_due_date` null: none). `reservation_payments_received` holds the payments of
 * its folio net of refunds, kept by the folio module in the payment's transaction: a row of its own, not a column of
 * the reservation (and without a foreign key to it), so a payment, which locks the folio first, never waits for the
 * reservation's row lock that a cancellation holds while it posts its fee to the folio.
 */
export class Migration0034DepositsAndPolicySnapshots extends Migration {
  override name = "0034-deposits-and-policy-snapshots";

  override up(): void {
    this.addSql(`
      alter table reservation_rooms
        add column policy_free_hours int check (policy_free_hours between 0 and 8784),
        add column policy_fee_kind text check (policy_fee_kind in ('FIRST_NIGHT', 'PERCENT', 'FIXED')),
        add column policy_fee_value bigint check (policy_fee_value >= 0),
        add constraint reservation_rooms_policy_whole check (
          (policy_free_hours is null) = (policy_fee_kind is null) and (policy_fee_kind is null) = (policy_fee_value is null));
    `);
    this.addSql(`
      update reservation_rooms rr
         set policy_free_hours = rp.policy_free_hours, policy_fee_kind = rp.policy_fee_kind, policy_fee_value = rp.policy_fee_value
        from rate_plans rp
       where rp.property_id = rr.property_id and rp.id = rr.rate_plan_id and rp.policy_fee_kind is not null;
    `);
    this.addSql(`
      alter table rate_plans
        add column deposit_kind text check (deposit_kind in ('FIRST_NIGHT', 'PERCENT', 'FIXED')),
        add column deposit_value bigint check (deposit_value >= 0),
        add column deposit_due_anchor text check (deposit_due_anchor in ('AFTER_BOOKING', 'BEFORE_ARRIVAL')),
        add column deposit_due_days int check (deposit_due_days between 0 and 365),
        add constraint rate_plans_deposit_whole check (
          (deposit_kind is null) = (deposit_value is null) and (deposit_kind is null) = (deposit_due_anchor is null)
          and (deposit_kind is null) = (deposit_due_days is null));
    `);
    this.addSql(`
      alter table reservations
        add column deposit_due_minor bigint not null default 0 check (deposit_due_minor >= 0),
        add column deposit_due_date date,
        add constraint reservations_deposit_whole check ((deposit_due_minor = 0) = (deposit_due_date is null));
    `);
    this.addSql(`
      create table reservation_payments_received (
        property_id uuid not null,
        reservation_id uuid not null,
        paid_minor bigint not null,
        primary key (property_id, reservation_id)
      );
      insert into reservation_payments_received (property_id, reservation_id, paid_minor)
      select f.property_id, f.reservation_id, sum(fp.amount_minor)
        from folios f join folio_payments fp on fp.property_id = f.property_id and fp.folio_id = f.id
       group by f.property_id, f.reservation_id;
    `);
    // The overdue list reads only the stays that still owe a deposit.
    this.addSql(`
      create index reservations_deposit_due on reservations (property_id, deposit_due_date)
        where deposit_due_date is not null and status in ('TENTATIVE', 'GUARANTEED');
    `);
  }
}
