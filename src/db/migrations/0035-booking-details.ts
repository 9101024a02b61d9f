import { Migration } from "@mikro-orm/migrations";

/**
 * What a channel booking carries for the hotel beyond the stay: the guests of each room (names only), the
 * booker's remarks and a payment guarantee by reference (a tokenised card id and its type, never a card number).
 */
export class Migration0035BookingDetails extends Migration {
  override name = "0035-booking-details";

  override up(): void {
    this.addSql(`alter table reservation_rooms add column guest_names text[] not null default '{}';`);
    this.addSql(`alter table reservations add column remarks text[] not null default '{}';`);
    this.addSql(`alter table reservations add column payment_guarantee jsonb;`);
  }
}
