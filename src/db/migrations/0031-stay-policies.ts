import { Migration } from "@mikro-orm/migrations";

/**
 * Options and why a reservation was cancelled: a TENTATIVE reservation may hold its rooms until `option_until`
 * (a `reservations.option-expiry` job cancels it then with `cancellation_reason` 'option_expired'); a cancellation
 * by staff, a partner or a channel leaves the reason null.
 *
 * A rate plan's cancellation and no-show policy: free until `policy_free_hours` hours before arrival, then a fee of
 * the first night (FIRST_NIGHT), basis points of the stay total (PERCENT) or a fixed amount in minor units (FIXED);
 * all three columns null: no policy (cancelling is always free, a no-show costs nothing).
 *
 * A property's late check-out rule: a guest checking out on the departure date after `after_hour`:00 (hotel time)
 * owes `fee_value` minor units (FIXED) or basis points of one night (PERCENT). No row: no fee.
 */
export class Migration0031StayPolicies extends Migration {
  override name = "0031-stay-policies";

  override up(): void {
    this.addSql(`
      alter table reservations add column option_until timestamptz, add column cancellation_reason text
        check (cancellation_reason in ('option_expired'));
    `);
    this.addSql(`
      alter table rate_plans
        add column policy_free_hours int check (policy_free_hours between 0 and 8784),
        add column policy_fee_kind text check (policy_fee_kind in ('FIRST_NIGHT', 'PERCENT', 'FIXED')),
        add column policy_fee_value bigint check (policy_fee_value >= 0),
        add constraint rate_plans_policy_whole check (
          (policy_free_hours is null) = (policy_fee_kind is null) and (policy_fee_kind is null) = (policy_fee_value is null));
    `);
    this.addSql(`
      create table late_checkout_rules (
        property_id uuid primary key references properties(id),
        after_hour int not null check (after_hour between 0 and 23),
        fee_kind text not null check (fee_kind in ('FIXED', 'PERCENT')),
        fee_value bigint not null check (fee_value > 0),
        updated_at timestamptz not null
      );
    `);
  }
}
