import { Migration } from "@mikro-orm/migrations";

/**
 * Options and why a reservation was cancelled: a TENTATIVE reservation may hold its rooms until `option_until`
 * (a `reservations.option-expiry` job cancels it then with `cancellation_reason` 'option_expired'); a cancellation
 * by staff, a partner or a channel leaves the reason null.
 */
export class Migration0031StayPolicies extends Migration {
  override name = "0031-stay-policies";

  override up(): void {
    this.addSql(`
      alter table reservations add column option_until timestamptz, add column cancellation_reason text
        check (cancellation_reason in ('option_expired'));
    `);
  }
}
