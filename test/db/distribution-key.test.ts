import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { freshDatabaseUrl } from "../helpers/db.ts";

// docs/operations/sharding.md: every tenant table is keyed by property_id (the distribution key of a Citus-style
// sharded PostgreSQL), or the document names the table with its reason (a reference table, a global one, or a
// tenant table whose key lacks property_id for a stated reason). Read from the migrated schema itself.
const doc = readFileSync(join(import.meta.dirname, "../../docs/operations/sharding.md"), "utf8");

/** The rows of the document's table of exceptions: `| \`table\` | kind | reason |`. */
function documented(): Map<string, { kind: string; reason: string }> {
  const rows = new Map<string, { kind: string; reason: string }>();
  for (const [, table, kind, reason] of doc.matchAll(
    /^\| `([a-z0-9_]+)` \| (reference|global|tenant|group) \| (.+) \|$/gm,
  ))
    rows.set(table!, { kind: kind!, reason: reason!.trim() });
  return rows;
}

describe("the distribution key (docs/operations/sharding.md)", () => {
  it("every table has property_id in its primary key, or the document names it with a reason", async () => {
    const c = new pg.Client({ connectionString: await freshDatabaseUrl() });
    await c.connect();
    try {
      const { rows } = await c.query<{
        table: string;
        has_property: boolean;
        key_has_property: boolean;
        has_key: boolean;
      }>(
        `select t.table_name as table,
                exists (select 1 from information_schema.columns col
                        where col.table_schema = t.table_schema and col.table_name = t.table_name
                          and col.column_name = 'property_id') as has_property,
                exists (select 1 from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
                        where i.indrelid = format('%I.%I', t.table_schema, t.table_name)::regclass and i.indisprimary
                          and a.attname = 'property_id') as key_has_property,
                exists (select 1 from pg_index i
                        where i.indrelid = format('%I.%I', t.table_schema, t.table_name)::regclass and i.indisprimary) as has_key
         from information_schema.tables t
         where t.table_schema = 'public' and t.table_type = 'BASE TABLE'
           -- a partition counts as its partitioned table (the audit trail's months)
           and not exists (select 1 from pg_inherits h where h.inhrelid = format('%I.%I', t.table_schema, t.table_name)::regclass)
         order by 1`,
      );
      expect(rows.length).toBeGreaterThan(20);
      const exceptions = documented();
      const problems: string[] = [];
      for (const r of rows) {
        const listed = exceptions.get(r.table);
        if (r.key_has_property) {
          if (listed !== undefined) problems.push(`${r.table}: keyed by property_id, but listed as ${listed.kind}`);
          continue;
        }
        if (listed === undefined)
          problems.push(
            `${r.table}: ${r.has_property ? "property_id is not in its primary key" : "no property_id"}${r.has_key ? "" : " (no primary key)"}, and docs/operations/sharding.md gives no reason`,
          );
        else if (listed.reason.length < 10) problems.push(`${r.table}: no reason given`);
      }
      // a table the document lists must still exist
      const names = new Set(rows.map((r) => r.table));
      for (const t of exceptions.keys()) if (!names.has(t)) problems.push(`${t}: listed, but there is no such table`);
      expect(problems, rows.map((r) => `${r.table} ${r.has_property} ${r.key_has_property}`).join("\n")).toEqual([]);
    } finally {
      await c.end();
    }
  });
});
