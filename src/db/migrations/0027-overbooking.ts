import { Migration } from "@mikro-orm/migrations";

/**
 * Overbookings: the room nights a stay holds beyond a room type's rooms (a channel booking the channel had
 * already sold, or a staff create with `overbook`). `room_type_overbookings` says which holder (reservation) is
 * short how many rooms on which night; `room_type_days.sold` counts every held night, so a day's excess
 * (sold + blocked + out_of_order - total) equals the sum of its overbooking rows. A release on a day trims the
 * latest holders' rows first down to the day's new excess. The day row's check that nothing exceeds the total
 * goes: an overbooked day does, by design; ordinary takes keep their guard in the UPDATE itself.
 * `reservations.overbook` lets staff overbook explicitly (managers hold it).
 */
export class Migration0027Overbooking extends Migration {
  override name = "0027-overbooking";

  override up(): void {
    this.addSql(`
      alter table room_type_days drop constraint room_type_days_check;
      create table room_type_overbookings (
        property_id uuid not null references properties(id),
        room_type_id uuid not null,
        date date not null,
        holder_id uuid not null,
        rooms integer not null check (rooms > 0),
        created_at timestamptz not null,
        primary key (property_id, room_type_id, date, holder_id)
      );
      create index room_type_overbookings_holder on room_type_overbookings (property_id, holder_id);
      update roles set permissions = array_append(permissions, 'reservations.overbook') where code = 'manager' and not ('reservations.overbook' = any(permissions));
    `);
  }
}
