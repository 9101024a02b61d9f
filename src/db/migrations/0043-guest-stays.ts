import { Migration } from "@mikro-orm/migrations";

/**
 * Guests on room lines (src/modules/guests): a row per guest profile and room line the guest occupies. The
 * property and reservation are the line's (a line never moves between them); `group_id` is the guest's, so a
 * group's stays are found without the reservations. `guests.merge` (MergeGuests) goes to managers.
 */
export class Migration0043GuestStays extends Migration {
  override name = "0043-guest-stays";

  override up(): void {
    this.addSql(`
      create table guest_stays (
        guest_id uuid not null references guests(id),
        reservation_room_id uuid not null references reservation_rooms(id),
        property_id uuid not null,
        reservation_id uuid not null,
        group_id uuid not null references hotel_groups(id),
        linked_at timestamptz not null,
        primary key (reservation_room_id, guest_id),
        foreign key (property_id, reservation_id) references reservations (property_id, id)
      );
      create index guest_stays_guest on guest_stays (guest_id, linked_at desc, reservation_room_id desc);
      update roles set permissions = array_append(permissions, 'guests.merge') where code = 'manager' and not ('guests.merge' = any(permissions));
    `);
  }
}
