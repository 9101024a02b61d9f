import { sql, type Kysely } from "kysely";
import { newId } from "../../lib/ids.ts";

export interface HotelGroup {
  id: string;
  code: string;
  name: string;
}

export async function findGroupByCode(db: Kysely<unknown>, code: string): Promise<HotelGroup | undefined> {
  const { rows } = await sql<HotelGroup>`select id, code, name from hotel_groups where code = ${code}`.execute(db);
  return rows[0];
}

/** The group with this code, created when missing (concurrent creators meet on the unique code). */
export async function ensureGroup(db: Kysely<unknown>, code: string, name: string): Promise<HotelGroup> {
  await sql`insert into hotel_groups (id, code, name) values (${newId()}, ${code}, ${name}) on conflict (code) do nothing`.execute(db);
  const group = await findGroupByCode(db, code);
  if (group === undefined) throw new Error(`hotel group ${code} vanished`);
  return group;
}
