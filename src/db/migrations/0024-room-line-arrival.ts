import { Migration } from "@mikro-orm/migrations";

/**
 * A room line carries its stay's arrival date (kept equal to its reservation's by the statements that write
 * either), so the forecast and the occupancy report read the lines of a date range through an index instead of
 * looking each stay's lines up by reservation: on a hotel with years of history, a year's forecast made one index
 * lookup per stay into a table of millions of lines (1.4x the time on a demo-sized database).
 */
export class Migration0024RoomLineArrival extends Migration {
  override name = "0024-room-line-arrival";

  override up(): void {
    this.addSql(`
alter table reservation_rooms add column arrival_date date;
update reservation_rooms rr set arrival_date = r.arrival_date from reservations r where r.property_id = rr.property_id and r.id = rr.reservation_id;
alter table reservation_rooms alter column arrival_date set not null;
create index reservation_rooms_arrival on reservation_rooms (property_id, arrival_date);
`);
  }
}
