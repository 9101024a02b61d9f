import { Migration } from "@mikro-orm/migrations";

/**
 * The front desk's day.
 *
 * A check-out before the departure date ends the stay on the business date, and the reservation's departure date
 * becomes that date: a guest who checks out on the arrival day (a day use) leaves a stay whose departure equals its
 * arrival, so the check `departure_date > arrival_date` becomes `>=` (every booking path still asks for a night).
 *
 * Out-of-order periods are scheduled blocks of one room (`room_out_of_order`), listed, changed and removed by staff
 * holding the new permission `rooms.manage` (managers hold it); `updated_at` says when a period last changed.
 */
export class Migration0025FrontDesk extends Migration {
  override name = "0025-front-desk";

  override up(): void {
    this.addSql(`
do $$
declare c text;
begin
  for c in
    select con.conname from pg_constraint con
     where con.conrelid = 'reservations'::regclass and con.contype = 'c'
       and pg_get_constraintdef(con.oid) like '%departure_date > arrival_date%'
  loop
    execute format('alter table reservations drop constraint %I', c);
  end loop;
end $$;
alter table reservations add constraint reservations_departure_not_before_arrival check (departure_date >= arrival_date);
alter table room_out_of_order add column updated_at timestamptz;
update room_out_of_order set updated_at = created_at;
alter table room_out_of_order alter column updated_at set not null;
update roles set permissions = array_append(permissions, 'rooms.manage') where code = 'manager' and not ('rooms.manage' = any(permissions));
`);
  }
}
