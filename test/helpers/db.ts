import { inject } from "vitest";
import pg from "pg";
import { newId } from "../../src/lib/ids.ts";

/** A database of its own for one test file, cloned from the migrated template (fast: a file copy). */
export async function freshDatabaseUrl(): Promise<string> {
  const admin = inject("DATABASE_URL_ADMIN");
  const name = `t_${newId().replaceAll("-", "").slice(-16)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`create database ${name} template hotelops_template`);
        break;
      } catch (err) {
        // Two files cloning at the same instant: PostgreSQL refuses a template that is being accessed.
        if (attempt > 50 || !String(err).includes("being accessed")) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await client.end();
  }
  return admin.replace(/\/postgres$/, `/${name}`);
}
