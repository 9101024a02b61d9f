import { Migration } from "@mikro-orm/migrations";

/**
 * What a stay held, kept so the inventory can be recomputed from the stays (`npm run ops -- inventory:verify`).
 *
 * A room move to another room type changes the room line's type from the business date on; the nights before stay
 * sold on the old type. `reservation_room_moves` keeps each such move: a line's type on a night is the old type of
 * the first move after that night, else its current type.
 *
 * A cancelled stay that had begun (in house or checked out) keeps the nights before the business date of its
 * cancellation: `reservations.nights_kept_until` is that date (null for every other reservation; a cancellation
 * before arrival keeps no night).
 */
export class Migration0028StayHistory extends Migration {
  override name = "0028-stay-history";

  override up(): void {
    this.addSql(`
      create table reservation_room_moves (
        id uuid primary key,
        property_id uuid not null references properties(id),
        room_line_id uuid not null,
        moved_on date not null,
        from_room_type_id uuid not null,
        to_room_type_id uuid not null,
        created_at timestamptz not null
      );
      create index reservation_room_moves_line on reservation_room_moves (property_id, room_line_id, moved_on);
      alter table reservations add column nights_kept_until date;
    `);
  }
}
