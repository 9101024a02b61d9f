import type { Queryable } from "../../db/queryable.ts";
import { newId } from "../../lib/ids.ts";

export interface HotelGroup {
  id: string;
  code: string;
  name: string;
}

async function findGroupByCode(db: Queryable, code: string): Promise<HotelGroup | undefined> {
  const rows = await db.query<HotelGroup>(`select id, code, name from hotel_groups where code = $1`, [code]);
  return rows[0];
}

/** The group with this code, created when missing (concurrent creators meet on the unique code). */
export async function ensureGroup(db: Queryable, code: string, name: string): Promise<HotelGroup> {
  await db.query(`insert into hotel_groups (id, code, name) values ($1, $2, $3) on conflict (code) do nothing`, [
    newId(),
    code,
    name,
  ]);
  const group = await findGroupByCode(db, code);
  if (group === undefined) throw new Error(`hotel group ${code} vanished`);
  return group;
}
