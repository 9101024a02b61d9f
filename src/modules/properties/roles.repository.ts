import { sql, type Kysely } from "kysely";

export interface Role {
  code: string;
  name: string;
  permissions: string[];
}

export async function findRole(db: Kysely<unknown>, code: string): Promise<Role | undefined> {
  const { rows } = await sql<Role>`select code, name, permissions from roles where code = ${code}`.execute(db);
  return rows[0];
}

export async function listRoles(db: Kysely<unknown>): Promise<Role[]> {
  const { rows } = await sql<Role>`select code, name, permissions from roles order by code`.execute(db);
  return rows;
}
