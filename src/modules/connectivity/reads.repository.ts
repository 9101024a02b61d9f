import type pg from "pg";

export type MappingKind = "property" | "room_type" | "rate_plan";

/** internal id -> provider code, for one provider at one property. */
export async function mappingsOf(pool: pg.Pool, propertyId: string, provider: string): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ internal_id: string; external_code: string }>(
    "select internal_id, external_code from provider_mappings where property_id = $1 and provider = $2",
    [propertyId, provider],
  );
  return new Map(rows.map((r) => [r.internal_id, r.external_code]));
}

/** Provider code -> internal id for one kind (used to translate inbound events). */
export async function internalIdOf(
  db: { query: pg.Pool["query"] },
  propertyId: string,
  provider: string,
  kind: MappingKind,
  externalCode: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ internal_id: string }>(
    "select internal_id from provider_mappings where property_id = $1 and provider = $2 and kind = $3 and external_code = $4",
    [propertyId, provider, kind, externalCode],
  );
  return rows[0]?.internal_id;
}

export async function setMapping(
  pool: pg.Pool,
  m: { propertyId: string; provider: string; kind: MappingKind; internalId: string; externalCode: string },
): Promise<void> {
  await pool.query(
    `insert into provider_mappings (property_id, provider, kind, internal_id, external_code) values ($1, $2, $3, $4, $5)
     on conflict (property_id, provider, kind, internal_id) do update set external_code = excluded.external_code, updated_at = now()`,
    [m.propertyId, m.provider, m.kind, m.internalId, m.externalCode],
  );
}

export interface RoomTypeRow {
  id: string;
  code: string;
  name: string;
  room_count: number;
}

export async function roomTypesOf(pool: pg.Pool, propertyId: string): Promise<RoomTypeRow[]> {
  return (
    await pool.query<RoomTypeRow>(
      "select id, code, name, room_count from room_types where property_id = $1 order by code",
      [propertyId],
    )
  ).rows;
}

export async function ratePlansOf(
  pool: pg.Pool,
  propertyId: string,
): Promise<{ id: string; code: string; name: string; room_type_codes: string[] }[]> {
  const { rows } = await pool.query<{ id: string; code: string; name: string; room_type_codes: string[] | null }>(
    `select rp.id, rp.code, rp.name, array_agg(rt.code order by rt.code) filter (where rt.code is not null) as room_type_codes
       from rate_plans rp
       left join rate_plan_room_types x on x.property_id = rp.property_id and x.rate_plan_id = rp.id
       left join room_types rt on rt.property_id = x.property_id and rt.id = x.room_type_id
      where rp.property_id = $1
      group by rp.id, rp.code, rp.name
      order by rp.code`,
    [propertyId],
  );
  return rows.map((r) => ({ ...r, room_type_codes: r.room_type_codes ?? [] }));
}

export interface DayRow {
  room_type_id: string;
  date: string;
  total: number;
  sold: number;
  blocked: number;
  out_of_order: number;
}

/**
 * Inventory rows per room type per day over [from, to): one index range scan returning only the days that
 * have a row. Days without one have had no booking, block or out-of-order yet (the caller fills them in with
 * the room type's room count), which keeps a 50 x 366 request to a few hundred rows on a quiet calendar.
 */
export async function inventoryRowsOf(
  pool: pg.Pool,
  propertyId: string,
  roomTypeIds: string[],
  from: string,
  to: string,
): Promise<DayRow[]> {
  const { rows } = await pool.query<DayRow>(
    `select room_type_id, to_char(date, 'YYYY-MM-DD') as date, total, sold, blocked, out_of_order
       from room_type_days
      where property_id = $1 and room_type_id = any($2::uuid[]) and date >= $3::date and date < $4::date`,
    [propertyId, roomTypeIds, from, to],
  );
  return rows;
}
