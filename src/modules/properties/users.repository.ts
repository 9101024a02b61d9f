import { normalizeEmail } from "../../lib/email-address.ts";
import type { Queryable } from "../../db/queryable.ts";

export interface User {
  id: string;
  email: string;
  name: string;
  active: boolean;
}

export interface UserWithHash extends User {
  passwordHash: string;
}

export async function insertUser(
  db: Queryable,
  u: { id: string; email: string; name: string; passwordHash: string; now: Date },
): Promise<void> {
  await db.query(`insert into users (id, email, name, password_hash, created_at) values ($1, $2, $3, $4, $5)`, [
    u.id,
    normalizeEmail(u.email),
    u.name,
    u.passwordHash,
    u.now,
  ]);
}

/**
 * E-mail lookup of the address in its one form (normalizeEmail: NFC, lower-case domain), case-insensitive (unique
 * index on lower(email)). Includes the hash: for login only.
 */
export async function findUserByEmail(db: Queryable, email: string): Promise<UserWithHash | undefined> {
  const rows = await db.query<UserWithHash>(
    `select id, email, name, active, password_hash as "passwordHash" from users where lower(email) = lower($1)`,
    [normalizeEmail(email)],
  );
  return rows[0];
}

export async function findUserById(db: Queryable, id: string): Promise<User | undefined> {
  const rows = await db.query<User>(`select id, email, name, active from users where id = $1`, [id]);
  return rows[0];
}
