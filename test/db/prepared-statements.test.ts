import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { runBossSql, sendStatementsUnnamed, statementFamily } from "../../src/db/queryable.ts";
import { pooledTransaction } from "../../src/db/pooled-transaction.ts";
import pg from "pg";

let t: TestDatabase;

beforeAll(async () => {
  t = await openTestDatabase();
  await t.boss.pgboss.createQueue("prepared-probe");
});
afterAll(async () => {
  await t?.close();
});

describe("named statements", () => {
  it("a family names each distinct text once and leaves texts past its bound unnamed", () => {
    const family = statementFamily("probe_family", 2);
    const a = family("select 1 where $1::int = 1");
    expect(a).toEqual({ name: "probe_family_0", text: "select 1 where $1::int = 1" });
    expect(family("select 1 where $1::int = 1")).toBe(a);
    expect(family("select 2 where $1::int = 1")).toEqual({
      name: "probe_family_1",
      text: "select 2 where $1::int = 1",
    });
    expect(family("select 3 where $1::int = 1")).toBe("select 3 where $1::int = 1");
  });

  it("pg-boss's job insert in a transaction is prepared once on its connection, and its jobs are written", async () => {
    const jobs = async () =>
      Number(
        (await t.db.pool.query<{ n: string }>("select count(*) as n from pgboss.job where name = 'prepared-probe'"))
          .rows[0]!.n,
      );
    const before = await jobs();
    const pool = new pg.Pool({ connectionString: t.url, max: 1 }); // every transaction below on one connection
    try {
      for (let i = 0; i < 3; i++)
        await pooledTransaction(pool, async (_, client) => {
          await t.boss.pgboss.insert("prepared-probe", [{ data: { i } }], {
            db: { executeSql: (text, values) => runBossSql(client, text, values) },
          });
        });
      const { rows } = await pool.query<{ name: string; statement: string }>(
        "select name, statement from pg_prepared_statements",
      );
      expect(rows.filter((r) => r.name.startsWith("pgboss_") && r.statement.includes("prepared-probe"))).toHaveLength(
        1,
      );
      // a text of several commands (pg-boss's scripts, no parameters) runs as it is: a prepared one would fail
      await expect(runBossSql(pool, "select 1; select 2", [])).resolves.toBeDefined();
    } finally {
      await pool.end();
    }
    expect((await jobs()) - before).toBe(3);
  });

  it("behind PgBouncer (sendStatementsUnnamed) pg-boss's statements go unnamed", async () => {
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    sendStatementsUnnamed(pool);
    try {
      await runBossSql(pool, "select $1::int as n", [1]);
      expect((await pool.query("select name from pg_prepared_statements")).rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
