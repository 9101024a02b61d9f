import { Migration } from "@mikro-orm/migrations";

/**
 * Drops `room_type_days_by_date` (property_id, date). Every read of the day rows names the room type, so the
 * primary key (property_id, room_type_id, date) serves them all in room type and date order. The extra index
 * only cost writes and, right after new rows arrived (before ANALYZE saw them), lured the planner into a scan of
 * the property's whole date range once per room type.
 */
export class Migration0011RoomTypeDaysByKey extends Migration {
  override name = "0011-room-type-days-by-key";

  override up(): void {
    this.addSql("drop index room_type_days_by_date;");
  }
}
