import { Migration } from "@mikro-orm/migrations";

/**
 * Inventory (room types, rooms, out-of-order ranges, rate plans, daily prices, room blocks), the per-day
 * inventory counters and reservations with their room lines.
 *
 * `room_type_days` is the one place availability lives: a row per property x room type x date with total,
 * sold, blocked and out_of_order, changed by the same transaction that books, blocks or closes a room. Its
 * CHECK makes overbooking impossible even for a buggy caller; services use a guarded UPDATE
 * (`... where sold + blocked + out_of_order + n <= total`) so the last room goes to exactly one transaction
 * (row locks serialise the writers; the loser sees the updated row and matches nothing). Rows are created
 * lazily (for a stay, block or range) from `room_types.room_count`; a date without a row has
 * total = room_count and nothing sold.
 *
 * `property_counters.change_seq` is the per-property change sequence of reservations (the partner feed pages
 * by it). It is incremented by an UPDATE on the property's counter row as the LAST statement before commit,
 * so the row lock is held until commit and sequence numbers become visible in commit order: a reader that has
 * seen seq N never later finds a newly committed change with a seq <= N. (A PostgreSQL sequence would hand
 * out numbers in call order, not commit order, so a slow transaction could commit a smaller seq after a
 * reader moved past it.)
 */
export class Migration0004InventoryReservations extends Migration {
  override name = "0004-inventory-reservations";

  override up(): void {
    this.addSql(`
create table room_types (
  id uuid primary key,
  property_id uuid not null references properties(id),
  code text not null check (code ~ '^[A-Z0-9][A-Z0-9_-]{0,31}$'),
  name text not null,
  max_occupancy integer not null check (max_occupancy between 1 and 20),
  room_count integer not null default 0 check (room_count >= 0),
  created_at timestamptz not null,
  unique (property_id, code),
  unique (property_id, id)
);

create table rooms (
  id uuid primary key,
  property_id uuid not null references properties(id),
  room_type_id uuid not null,
  number text not null check (length(number) between 1 and 16),
  status text not null check (status in ('CLEAN', 'DIRTY', 'INSPECTED', 'OUT_OF_ORDER')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (property_id, number),
  unique (property_id, id),
  foreign key (property_id, room_type_id) references room_types (property_id, id)
);

-- A room out of order from from_date (inclusive) to to_date (exclusive); counted in room_type_days.out_of_order.
create table room_out_of_order (
  id uuid primary key,
  property_id uuid not null,
  room_id uuid not null,
  from_date date not null,
  to_date date not null check (to_date > from_date),
  reason text not null default '',
  created_at timestamptz not null,
  foreign key (property_id, room_id) references rooms (property_id, id)
);
create index room_out_of_order_room on room_out_of_order (property_id, room_id, to_date);

create table rate_plans (
  id uuid primary key,
  property_id uuid not null references properties(id),
  code text not null check (code ~ '^[A-Z0-9][A-Z0-9_-]{0,31}$'),
  name text not null,
  board_type text not null check (board_type in ('ROOM_ONLY', 'BED_AND_BREAKFAST', 'HALF_BOARD', 'FULL_BOARD', 'ALL_INCLUSIVE')),
  created_at timestamptz not null,
  unique (property_id, code),
  unique (property_id, id)
);

create table rate_plan_room_types (
  property_id uuid not null,
  rate_plan_id uuid not null,
  room_type_id uuid not null,
  primary key (property_id, rate_plan_id, room_type_id),
  foreign key (property_id, rate_plan_id) references rate_plans (property_id, id),
  foreign key (property_id, room_type_id) references room_types (property_id, id)
);

create table daily_prices (
  property_id uuid not null,
  rate_plan_id uuid not null,
  room_type_id uuid not null,
  date date not null,
  amount_minor bigint not null check (amount_minor >= 0),
  primary key (property_id, rate_plan_id, room_type_id, date),
  foreign key (property_id, rate_plan_id, room_type_id) references rate_plan_room_types (property_id, rate_plan_id, room_type_id)
);

create table room_blocks (
  id uuid primary key,
  property_id uuid not null,
  room_type_id uuid not null,
  name text not null default '',
  from_date date not null,
  to_date date not null check (to_date > from_date),
  count integer not null check (count > 0),
  created_at timestamptz not null,
  foreign key (property_id, room_type_id) references room_types (property_id, id)
);
create index room_blocks_property on room_blocks (property_id, from_date);

create table room_type_days (
  property_id uuid not null,
  room_type_id uuid not null,
  date date not null,
  total integer not null check (total >= 0),
  sold integer not null default 0 check (sold >= 0),
  blocked integer not null default 0 check (blocked >= 0),
  out_of_order integer not null default 0 check (out_of_order >= 0),
  primary key (property_id, room_type_id, date),
  check (sold + blocked + out_of_order <= total),
  foreign key (property_id, room_type_id) references room_types (property_id, id)
);
-- Availability reads one property's days over a date range for all room types: one index range scan.
create index room_type_days_by_date on room_type_days (property_id, date);

create table property_counters (
  property_id uuid primary key references properties(id),
  change_seq bigint not null default 0
);

-- Reservation codes: globally unique numbers (so unique per property) without a per-property lock.
create sequence reservation_code_seq start 100001;

create table reservations (
  id uuid primary key,
  property_id uuid not null references properties(id),
  code text not null,
  status text not null check (status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE', 'CHECKED_OUT', 'NO_SHOW', 'CANCELLED')),
  source text not null check (source in ('DIRECT', 'MOBILE', 'PANEL', 'CHANNEL', 'API')),
  channel text,
  external_reference text,
  holder_name text not null,
  arrival_date date not null,
  departure_date date not null check (departure_date > arrival_date),
  adults integer not null check (adults >= 1),
  children integer not null check (children >= 0),
  notes text not null default '',
  total_minor bigint not null check (total_minor >= 0),
  currency char(3) not null,
  cancelled_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- Set by the last statement of every writing transaction (see above); null only inside that transaction.
  change_seq bigint,
  unique (property_id, code),
  unique (property_id, id)
);
create unique index reservations_change_seq on reservations (property_id, change_seq);
-- A channel's booking is created once: a replayed external reference finds the first reservation.
create unique index reservations_external_ref on reservations (property_id, (coalesce(channel, '')), external_reference) where external_reference is not null;
create index reservations_arrival on reservations (property_id, arrival_date);

create table reservation_rooms (
  id uuid primary key,
  property_id uuid not null,
  reservation_id uuid not null,
  position integer not null,
  room_type_id uuid not null,
  rate_plan_id uuid not null,
  room_id uuid,
  adults integer not null check (adults >= 1),
  children integer not null check (children >= 0),
  nightly_minor bigint[] not null,
  total_minor bigint not null check (total_minor >= 0),
  checked_in_at timestamptz,
  checked_out_at timestamptz,
  unique (reservation_id, position),
  foreign key (property_id, reservation_id) references reservations (property_id, id),
  foreign key (property_id, room_type_id) references room_types (property_id, id),
  foreign key (property_id, rate_plan_id) references rate_plans (property_id, id),
  foreign key (property_id, room_id) references rooms (property_id, id)
);
create index reservation_rooms_reservation on reservation_rooms (property_id, reservation_id);
create index reservation_rooms_room on reservation_rooms (property_id, room_id) where room_id is not null;
    `);
  }
}
