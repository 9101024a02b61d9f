import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import pg from "pg";
import { newId } from "../../src/lib/ids.ts";
import { startArguments } from "../../scripts/start-command.ts";

/** An empty database of its own (not the migrated template). */
async function emptyDatabase(): Promise<string> {
  const admin = inject("DATABASE_URL_ADMIN");
  const name = `m_${newId().replaceAll("-", "").slice(-16)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name} template template0`);
  await client.end();
  return admin.replace(/\/postgres$/, `/${name}`);
}

describe("a migration that fails", () => {
  it(
    "leaves the schema as it was and stops the start command with a clear message (exit code 3)",
    { timeout: 60_000 },
    async () => {
      const url = await emptyDatabase();
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        // an object in the way of a later migration (0005 creates webhook_endpoints), so 0001-0004 succeed first
        await db.query("create table webhook_endpoints (id int primary key)");
        const tablesBefore = await db.query(
          "select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2",
        );

        let output = "";
        const child = spawn(process.execPath, startArguments(), {
          cwd: join(import.meta.dirname, "../.."),
          env: { ...process.env, DATABASE_URL: url, ROLE: "api", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        child.stdout.on("data", (c: Buffer) => (output += c.toString()));
        child.stderr.on("data", (c: Buffer) => (output += c.toString()));
        const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));

        expect(code).toBe(3);
        expect(output).toContain(
          "Database migration failed, nothing was applied (the schema is as it was before this start)",
        );
        expect(output).toContain("webhook_endpoints");
        // no stack trace for an operator to dig through
        expect(output).not.toMatch(/\n\s+at /);
        const tablesAfter = await db.query(
          "select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') and table_name <> 'mikro_orm_migrations' order by 1, 2",
        );
        expect(tablesAfter.rows).toEqual(tablesBefore.rows);
        const recorded = await db.query(
          "select count(*)::int as n from information_schema.tables where table_name = 'mikro_orm_migrations'",
        );
        if (recorded.rows[0].n > 0)
          expect((await db.query("select count(*)::int as n from mikro_orm_migrations")).rows[0].n).toBe(0);
      } finally {
        await db.end();
      }
    },
  );
});
