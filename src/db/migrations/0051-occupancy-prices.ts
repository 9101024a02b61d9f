import { Migration } from "@mikro-orm/migrations";

/**
 * Occupancy pricing. A rate plan flagged `prices_by_occupancy` prices a room per number of adults: the day's row in
 * `daily_prices` stays the price for the room type's max occupancy (the price every other plan has, and the one a
 * day needs to be sold), and `daily_occupancy_prices` holds the prices for fewer adults, keyed like the day rows.
 * A booking of n adults pays the row for n when there is one, else the day's price.
 */
export class Migration0051OccupancyPrices extends Migration {
  override name = "0051-occupancy-prices";

  override up(): void {
    this.addSql(`
      alter table rate_plans add column prices_by_occupancy boolean not null default false;
      create table daily_occupancy_prices (
        property_id uuid not null,
        rate_plan_id uuid not null,
        room_type_id uuid not null,
        date date not null,
        adults smallint not null check (adults between 1 and 20),
        amount_minor bigint not null check (amount_minor >= 0),
        primary key (property_id, rate_plan_id, room_type_id, date, adults),
        foreign key (property_id, rate_plan_id, room_type_id)
          references rate_plan_room_types (property_id, rate_plan_id, room_type_id)
      );
    `);
  }
}
