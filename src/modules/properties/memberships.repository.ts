import type { Queryable } from "../../db/queryable.ts";
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
export async function upsertMembership(
  db: Queryable,
  m: { userId: string; propertyId: string; role: string; now: Date },
): Promise<string> {
  const rows = await db.query<{ id: string }>(
    `insert into memberships (id, user_id, property_id, role_code, created_at) values ($1, $2, $3, $4, $5)
    on conflict (user_id, property_id) do update set role_code = excluded.role_code, active = true returning id`,
    [newId(), m.userId, m.propertyId, m.role, m.now],
  );
  return rows[0]!.id;
}

/** Active memberships of a user in active properties, with the role's permissions (mobile login profile). */
export async function listActiveMemberships(db: Queryable, userId: string): Promise<Membership[]> {
  const rows = await db.query<Membership>(
    `select m.id, m.user_id as "userId", m.property_id as "propertyId", p.code as "propertyCode", p.name as "propertyName",
      m.role_code as role, r.permissions
    from memberships m join properties p on p.id = m.property_id join roles r on r.code = m.role_code
    where m.user_id = $1 and m.active and p.active order by p.code`,
    [userId],
  );
  return rows;
}

/** The active membership of a user in one property, or undefined. */
export async function findActiveMembership(
  db: Queryable,
  userId: string,
  propertyId: string,
): Promise<Membership | undefined> {
  const rows = await db.query<Membership>(
    `select m.id, m.user_id as "userId", m.property_id as "propertyId", p.code as "propertyCode", p.name as "propertyName",
      m.role_code as role, r.permissions
    from memberships m join properties p on p.id = m.property_id join roles r on r.code = m.role_code
    where m.user_id = $1 and m.property_id = $2 and m.active and p.active`,
    [userId, propertyId],
  );
  return rows[0];
}

/** The active users of a property whose role holds `permission` (who hears about what that permission governs). */
export async function membersWithPermission(db: Queryable, propertyId: string, permission: string): Promise<string[]> {
  const rows = await db.query<{ userId: string }>(
    `select m.user_id as "userId" from memberships m join roles r on r.code = m.role_code join users u on u.id = m.user_id and u.active
      where m.property_id = $1 and m.active and $2 = any(r.permissions) order by m.user_id`,
    [propertyId, permission],
  );
  return rows.map((r) => r.userId);
}
