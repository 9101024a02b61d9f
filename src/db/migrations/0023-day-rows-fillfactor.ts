import { Migration } from "@mikro-orm/migrations";

/**
 * Day rows (`room_type_days`) are updated by every booking, cancellation and block (total, sold, blocked,
 * out_of_order; no indexed column). At fill factor 100 their pages are full, so an update writes the new row version
 * on another page and a new entry in the key index: until vacuum the availability and forecast reads find a dead
 * version next to every live one, and a large table is vacuumed rarely (a share of its rows must have changed). With
 * 15% of each page kept free the update stays on its page (a HOT update): no new index entry, and the dead version
 * is pruned the next time the page is read. Applies to pages written from now on; existing pages gain free space as
 * vacuum clears them.
 */
export class Migration0023DayRowsFillfactor extends Migration {
  override name = "0023-day-rows-fillfactor";

  override up(): void {
    this.addSql(`alter table room_type_days set (fillfactor = 85);`);
  }
}
