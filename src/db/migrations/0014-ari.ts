import { Migration } from "@mikro-orm/migrations";

/**
 * ARI (availability, rates, inventory restrictions) for channel managers.
 *
 * `rate_restrictions`: per rate plan x room type x date, minimum/maximum stay (counted from the arrival date),
 * closed to arrival, closed to departure and stop sell; a missing row means no restriction.
 *
 * `ari_changes` is the ARI delta feed: one row per change of availability, prices or restrictions (room type and
 * rate plan codes, date range, reason), numbered from `ari_counters.seq`. The counter row is updated near the end
 * of the writing transaction and stays locked until commit, so sequence numbers become visible in commit order
 * (the same rule as the reservation change sequence): a reader resuming after seq N never misses a later commit.
 * `rates.manage` lets staff set prices and restrictions (managers hold it).
 */
export class Migration0014Ari extends Migration {
  override name = "0014-ari";

  override up(): void {
    this.addSql(`
      create table rate_restrictions (
        property_id uuid not null,
        rate_plan_id uuid not null,
        room_type_id uuid not null,
        date date not null,
        min_stay integer check (min_stay between 1 and 366),
        max_stay integer check (max_stay between 1 and 366),
        closed_to_arrival boolean not null default false,
        closed_to_departure boolean not null default false,
        stop_sell boolean not null default false,
        primary key (property_id, rate_plan_id, room_type_id, date),
        foreign key (property_id, rate_plan_id, room_type_id) references rate_plan_room_types (property_id, rate_plan_id, room_type_id)
      );
      create table ari_counters (
        property_id uuid primary key references properties(id),
        seq bigint not null default 0
      );
      create table ari_changes (
        property_id uuid not null references properties(id),
        seq bigint not null,
        reason text not null,
        from_date date not null,
        to_date date not null,
        room_types text[] not null,
        rate_plans text[] not null default '{}',
        changed_at timestamptz not null,
        primary key (property_id, seq)
      );
      create index ari_changes_changed on ari_changes (property_id, changed_at);
      update roles set permissions = array_append(permissions, 'rates.manage') where code = 'manager' and not ('rates.manage' = any(permissions));
    `);
  }
}
