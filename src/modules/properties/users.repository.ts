import { sql, type Kysely } from "kysely";

export interface User {
  id: string;
  email: string;
  name: string;
  active: boolean;
}

export interface UserWithHash extends User {
  passwordHash: string;
}

export async function insertUser(db: Kysely<unknown>, u: { id: string; email: string; name: string; passwordHash: string; now: Date }): Promise<void> {
  await sql`insert into users (id, email, name, password_hash, created_at) values (${u.id}, ${u.email}, ${u.name}, ${u.passwordHash}, ${u.now})`.execute(db);
}

/** E-mail lookup is case-insensitive (unique index on lower(email)). Includes the hash: for login only. */
export async function findUserByEmail(db: Kysely<unknown>, email: string): Promise<UserWithHash | undefined> {
  const { rows } = await sql<UserWithHash>`select id, email, name, active, password_hash as "passwordHash" from users where lower(email) = lower(${email})`.execute(db);
  return rows[0];
}

export async function findUserById(db: Kysely<unknown>, id: string): Promise<User | undefined> {
  const { rows } = await sql<User>`select id, email, name, active from users where id = ${id}`.execute(db);
  return rows[0];
}
