import { Migration } from "@mikro-orm/migrations";

/**
 * Availability caps (owned by the inventory module): the most rooms of a type shown available on a day, set by a
 * partner the hotel lets manage allotment (scope `allotment.write`) through the ARI write. Null: no cap.
 */
export class Migration0045AvailabilityCaps extends Migration {
  override name = "0045-availability-caps";

  override up(): void {
    this.addSql(`alter table room_type_days add column availability_cap int check (availability_cap >= 0);`);
  }
}
