import { sql, type Kysely } from "kysely";
import { newId } from "../../lib/ids.ts";

export interface Membership {
  id: string;
  userId: string;
  propertyId: string;
  propertyCode: string;
  propertyName: string;
  role: string;
  permissions: string[];
}

/** Gives the user the role in the property; an existing membership gets the new role and is re-activated. */
export async function upsertMembership(db: Kysely<unknown>, m: { userId: string; propertyId: string; role: string; now: Date }): Promise<string> {
  const { rows } = await sql<{ id: string }>`insert into memberships (id, user_id, property_id, role_code, created_at) values (${newId()}, ${m.userId}, ${m.propertyId}, ${m.role}, ${m.now})
    on conflict (user_id, property_id) do update set role_code = excluded.role_code, active = true returning id`.execute(db);
  return rows[0]!.id;
}

/** Active memberships of a user in active properties, with the role's permissions (mobile login profile). */
export async function listActiveMemberships(db: Kysely<unknown>, userId: string): Promise<Membership[]> {
  const { rows } = await sql<Membership>`select m.id, m.user_id as "userId", m.property_id as "propertyId", p.code as "propertyCode", p.name as "propertyName",
      m.role_code as role, r.permissions
    from memberships m join properties p on p.id = m.property_id join roles r on r.code = m.role_code
    where m.user_id = ${userId} and m.active and p.active order by p.code`.execute(db);
  return rows;
}

/** The active membership of a user in one property, or undefined. */
export async function findActiveMembership(db: Kysely<unknown>, userId: string, propertyId: string): Promise<Membership | undefined> {
  const { rows } = await sql<Membership>`select m.id, m.user_id as "userId", m.property_id as "propertyId", p.code as "propertyCode", p.name as "propertyName",
      m.role_code as role, r.permissions
    from memberships m join properties p on p.id = m.property_id join roles r on r.code = m.role_code
    where m.user_id = ${userId} and m.property_id = ${propertyId} and m.active and p.active`.execute(db);
  return rows[0];
}
