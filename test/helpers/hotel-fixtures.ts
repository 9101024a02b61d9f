import { randomBytes } from "node:crypto";
import type pg from "pg";
import { newId } from "../../src/lib/ids.ts";
import type { App } from "../../src/app.ts";
import { stayInRoom } from "../../src/modules/reservations/index.ts";
import { createInventoryService, type InventoryService } from "../../src/modules/inventory/index.ts";

/**
 * Minimal hotel rows written with SQL, for tests of modules that read them (folio, invoices, night audit)
 * without going through the services that own them.
 */
const suffix = (): string => randomBytes(3).toString("hex").toUpperCase();

export interface SeededProperty {
  id: string;
  code: string;
  roomTypeId: string;
  ratePlanId: string;
}

export async function seedProperty(
  pool: pg.Pool,
  opts: {
    businessDate?: string;
    amountScale?: number;
    vatRateBp?: number;
    accommodationTaxRateBp?: number;
    currency?: string;
    code?: string;
  } = {},
): Promise<SeededProperty> {
  const groupId = newId();
  const id = newId();
  const code = opts.code ?? `F${suffix()}`;
  await pool.query(`insert into hotel_groups (id, code, name) values ($1, $2, 'Group')`, [groupId, `G${suffix()}`]);
  await pool.query(
    `insert into properties (id, group_id, code, name, time_zone, currency, amount_scale, vat_rate_bp, accommodation_tax_rate_bp, business_date)
     values ($1, $2, $3, 'Hotel', 'Europe/Istanbul', $4, $5, $6, $7, $8)`,
    [
      id,
      groupId,
      code,
      opts.currency ?? "TRY",
      opts.amountScale ?? 100,
      opts.vatRateBp ?? 1000,
      opts.accommodationTaxRateBp ?? 200,
      opts.businessDate ?? "2026-11-22",
    ],
  );
  return seedRoomTypeAndRatePlan(pool, { id, code });
}

/** A room type DBL and a rate plan BAR for an existing property (e.g. one made by createTestProperty). */
export async function seedRoomTypeAndRatePlan(
  pool: pg.Pool,
  property: { id: string; code: string },
): Promise<SeededProperty> {
  const { id, code } = property;
  const roomTypeId = newId();
  const ratePlanId = newId();
  await pool.query(
    `insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at) values ($1, $2, 'DBL', 'Double', 2, 10, now())`,
    [roomTypeId, id],
  );
  await pool.query(
    `insert into rate_plans (id, property_id, code, name, board_type, created_at) values ($1, $2, 'BAR', 'Best available', 'ROOM_ONLY', now())`,
    [ratePlanId, id],
  );
  await pool.query(`insert into rate_plan_room_types (property_id, rate_plan_id, room_type_id) values ($1, $2, $3)`, [
    id,
    ratePlanId,
    roomTypeId,
  ]);
  return { id, code, roomTypeId, ratePlanId };
}

export async function seedRoom(pool: pg.Pool, p: SeededProperty, number: string, status = "CLEAN"): Promise<string> {
  const id = newId();
  await pool.query(
    `insert into rooms (id, property_id, room_type_id, number, status, created_at, updated_at) values ($1, $2, $3, $4, $5, now(), now())`,
    [id, p.id, p.roomTypeId, number, status],
  );
  return id;
}

export interface SeededReservation {
  id: string;
  code: string;
  roomLineId: string;
}

/** A reservation with one room line; nightly prices per night from arrival. */
export async function seedReservation(
  pool: pg.Pool,
  p: SeededProperty,
  opts: {
    arrival: string;
    departure: string;
    nightly: bigint[];
    status?: string;
    roomId?: string;
    checkedInAt?: Date;
    checkedOutAt?: Date;
  },
): Promise<SeededReservation> {
  const id = newId();
  const code = `R${suffix()}${suffix()}`;
  const total = opts.nightly.reduce((s, n) => s + n, 0n);
  await pool.query(
    `insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at, change_seq)
     values ($1, $2, $3, $4, 'DIRECT', 'Ayşe Yılmaz', $5, $6, 2, 0, $7, 'TRY', now(), now(), null)`,
    [id, p.id, code, opts.status ?? "GUARANTEED", opts.arrival, opts.departure, total.toString()],
  );
  // The change sequence the way the reservations module hands it out (property_counters).
  await pool.query(
    `with c as (insert into property_counters (property_id, change_seq) values ($1, 1)
                on conflict (property_id) do update set change_seq = property_counters.change_seq + 1 returning change_seq)
     update reservations r set change_seq = c.change_seq from c where r.property_id = $1 and r.id = $2`,
    [p.id, id],
  );
  const roomLineId = newId();
  await pool.query(
    `insert into reservation_rooms (id, property_id, reservation_id, position, room_type_id, rate_plan_id, room_id, adults, children, nightly_minor, total_minor, checked_in_at, checked_out_at, arrival_date)
     values ($1, $2, $3, 1, $4, $5, $6, 2, 0, $7::bigint[], $8, $9, $10, $11)`,
    [
      roomLineId,
      p.id,
      id,
      p.roomTypeId,
      p.ratePlanId,
      opts.roomId ?? null,
      opts.nightly.map(String),
      total.toString(),
      opts.checkedInAt ?? null,
      opts.checkedOutAt ?? null,
      opts.arrival,
    ],
  );
  return { id, code, roomLineId };
}

/**
 * A large ARI grid through the inventory service: room types created in the order of `roomTypeCodes`, `ratePlans`
 * rate plans (P0, P1, ...) covering all of them, and a price and every kind of restriction on every day of 2027 for
 * every pair (by SQL: the largest cells an answer can hold).
 */
export async function seedAriGrid(
  app: Pick<App, "deps" | "db" | "clock">,
  propertyId: string,
  roomTypeCodes: string[],
  ratePlans: number,
): Promise<{ roomTypes: string[]; ratePlans: string[] }> {
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  const types: string[] = [];
  for (const code of roomTypeCodes)
    types.push((await inventory.createRoomType(propertyId, { code, name: code, maxOccupancy: 2 })).id);
  const plans: string[] = [];
  for (let i = 0; i < ratePlans; i++) {
    const code = `P${i}`;
    plans.push(
      (await inventory.createRatePlan(propertyId, { code, name: code, boardType: "ROOM_ONLY", roomTypeIds: types })).id,
    );
  }
  await app.db.pool.query(
    `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select $1, rp, rt, d::date, 10000 + (extract(doy from d)::int * 7 + ordinality::int) % 5000
     from unnest($2::uuid[]) rp cross join unnest($3::uuid[]) with ordinality as t(rt, ordinality)
     cross join generate_series('2027-01-01'::date, '2028-01-01'::date, interval '1 day') d`,
    [propertyId, plans, types],
  );
  await app.db.pool.query(
    `insert into rate_restrictions (property_id, rate_plan_id, room_type_id, date, min_stay, max_stay,
                                    closed_to_arrival, closed_to_departure, stop_sell)
     select $1, rp, rt, d::date, 2, 14, extract(isodow from d) = 5, extract(isodow from d) = 1,
            extract(doy from d)::int % 17 = 0
     from unnest($2::uuid[]) rp cross join unnest($3::uuid[]) rt
     cross join generate_series('2027-01-01'::date, '2028-01-01'::date, interval '1 day') d`,
    [propertyId, plans, types],
  );
  return { roomTypes: types, ratePlans: plans };
}

/** The seller of a property's e-documents (needed before invoices can be finalized). */
export async function seedInvoiceIssuer(pool: pg.Pool, propertyId: string): Promise<void> {
  await pool.query(
    `insert into invoice_issuers (property_id, vkn, title, tax_office, street, district, city, postal_zone, country_code, updated_at)
     values ($1, '1234567890', 'Demo Turizm A.Ş.', 'Beyoğlu', 'İstiklal Caddesi 1', 'Beyoğlu', 'İstanbul', '34430', 'TR', now())
     on conflict (property_id) do nothing`,
    [propertyId],
  );
}

/**
 * Through the inventory service: room type DBL (`maxOccupancy`, default 2) with rooms `numbers`, and rate plan BAR
 * (room only) priced `priced` (default 25,000 a night from 2027-03-01 to 2027-04-30): the hotel the guest and feed
 * tests book into.
 */
export async function doubleRoomsAtBar(
  inv: InventoryService,
  propertyId: string,
  numbers: readonly string[],
  maxOccupancy = 2,
  priced: { from: string; to: string; amountMinor: bigint } = {
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  },
): Promise<{ roomTypeId: string; ratePlanId: string; roomIds: string[] }> {
  const dbl = await inv.createRoomType(propertyId, { code: "DBL", name: "Double", maxOccupancy });
  const roomIds: string[] = [];
  for (const number of numbers) roomIds.push((await inv.createRoom(propertyId, { number, roomTypeId: dbl.id })).id);
  const bar = await inv.createRatePlan(propertyId, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inv.setPrices(propertyId, { ratePlanId: bar.id, roomTypeId: dbl.id, ...priced });
  return { roomTypeId: dbl.id, ratePlanId: bar.id, roomIds };
}

/** Room numbers `from`..`to` as text. */
export const roomNumbers = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
