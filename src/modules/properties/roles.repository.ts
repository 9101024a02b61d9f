import type { Queryable } from "../../db/queryable.ts";

export interface Role {
  code: string;
  name: string;
  permissions: string[];
}

export async function findRole(db: Queryable, code: string): Promise<Role | undefined> {
  const rows = await db.query<Role>(`select code, name, permissions from roles where code = $1`, [code]);
  return rows[0];
}
