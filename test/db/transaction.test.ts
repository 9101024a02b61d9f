import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { getPlatformSettings, setPartnerApi } from "../../src/modules/platform/index.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { createRowWriter } from "../../src/jobs/boss.ts";
import { createHeldTransaction, type OutcomeRecord } from "../../src/db/held-transaction.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { runQuery } from "../../src/db/queryable.ts";
import { aheadOf } from "../../src/db/transaction.ts";

let t: TestDatabase;

beforeAll(async () => {
  t = await openTestDatabase();
  await t.boss.pgboss.createQueue("tx-probe");
  await t.db.pool.query("create table probe (id text primary key, n integer)");
});
afterAll(async () => {
  await t?.close();
});

async function count(text: string, params: unknown[] = []): Promise<number> {
  const { rows } = await t.db.pool.query<{ n: string }>(text, params);
  return Number(rows[0]?.n);
}

describe("transaction helper", () => {
  it("commits the row and the job together", async () => {
    await t.transact(async (tx) => {
      await tx.query("insert into probe (id) values ($1)", ["committed"]);
      await tx.enqueue("tx-probe", { id: "committed" });
    });
    expect(await count("select count(*) as n from probe where id = 'committed'")).toBe(1);
    expect(
      await count("select count(*) as n from pgboss.job where name = 'tx-probe' and data->>'id' = 'committed'"),
    ).toBe(1);
  });

  it("rolls back both the row and the job", async () => {
    await expect(
      t.transact(async (tx) => {
        await tx.query("insert into probe (id) values ($1)", ["rolled-back"]);
        await tx.enqueue("tx-probe", { id: "rolled-back" });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await count("select count(*) as n from probe where id = 'rolled-back'")).toBe(0);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'rolled-back'")).toBe(0);
  });

  it("runs several statements and the job in one transaction, seeing its own writes", async () => {
    const seen = await t.transact(async (tx) => {
      await tx.query("update platform_settings set status = 'degraded'");
      await tx.query("insert into probe (id, n) values ($1, $2), ($3, $4)", ["a", 1, "b", 2]);
      await tx.enqueue("tx-probe", { id: "orm" });
      const inList = await tx.query<{ n: number }>("select sum(n)::int as n from probe where id in ($1, $2)", [
        "a",
        "b",
      ]);
      const viaTx = await tx.query<{ n: number }>("select sum(n)::int as n from probe where id = any($1)", [
        ["a", "b"],
      ]);
      return [inList[0]?.n, viaTx[0]?.n];
    });
    expect(seen).toEqual([3, 3]);
    expect((await getPlatformSettings(t.db)).status).toBe("degraded");
    await t.transact(async (tx) => {
      await tx.query("update platform_settings set status = 'operational'");
    });
  });

  it("sends the last statement with COMMIT: committed when both succeed, its locks released at once", async () => {
    const seen = await t.transact(async (tx) => {
      await tx.query("insert into probe (id, n) values ($1, 1)", ["last-ok"]);
      return tx.queryLast<{ n: number }>("update probe set n = n + 1 where id = $1 returning n", ["last-ok"]);
    });
    expect(seen).toEqual([{ n: 2 }]);
    // committed: another connection sees the row and can lock it without waiting
    const { rows } = await t.db.pool.query("select n from probe where id = 'last-ok' for update nowait");
    expect(rows).toEqual([{ n: 2 }]);
  });

  it("rolls everything back when the last statement fails, and refuses a statement after it", async () => {
    await expect(
      t.transact(async (tx) => {
        await tx.query("insert into probe (id, n) values ($1, 1)", ["last-fails"]);
        await tx.enqueue("tx-probe", { id: "last-fails" });
        await tx.queryLast("insert into probe (id, n) values ($1, 1)", ["last-fails"]); // duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await count("select count(*) as n from probe where id = 'last-fails'")).toBe(0);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'last-fails'")).toBe(0);
    await expect(
      t.transact(async (tx) => {
        await tx.queryLast("select 1");
        await tx.query("insert into probe (id, n) values ($1, 1)", ["after-last"]);
      }),
    ).rejects.toThrow(/after the transaction's last one/);
    expect(await count("select count(*) as n from probe where id = 'after-last'")).toBe(0);
  });

  it("runs a statement ahead of BEGIN on its own: its row lock is not held by the transaction, a rollback keeps it", async () => {
    await t.db.pool.query("insert into probe (id, n) values ('ahead', 0)");
    const ahead = aheadOf<{ n: number }>("update probe set n = n + 1 where id = 'ahead' returning n", []);
    await expect(
      t.transact(
        async (tx) => {
          expect(await ahead.rows).toEqual([{ n: 1 }]);
          await tx.query("insert into probe (id, n) values ('ahead-tx', 1)");
          // another connection locks the row at once: the transaction does not hold it
          const { rows } = await t.db.pool.query("select n from probe where id = 'ahead' for update nowait");
          expect(rows).toEqual([{ n: 1 }]);
          throw new Error("boom");
        },
        { ahead },
      ),
    ).rejects.toThrow("boom");
    expect(ahead.alone).toBe(true);
    expect(await count("select n from probe where id = 'ahead'")).toBe(1);
    expect(await count("select count(*) as n from probe where id = 'ahead-tx'")).toBe(0);
  });

  it("inside a held transaction's savepoint the statement ahead is part of it and rolls back with the work", async () => {
    await t.db.pool.query("insert into probe (id, n) values ('ahead-held', 0)");
    const held = createHeldTransaction({ onOpen: async () => undefined });
    const ahead = aheadOf<{ n: number }>("update probe set n = n + 1 where id = 'ahead-held' returning n", []);
    await t.transact((tx) => tx.query("insert into probe (id, n) values ('ahead-held-first', 1)"), { keyed: held });
    await expect(
      t.transact(
        async () => {
          expect(await ahead.rows).toEqual([{ n: 1 }]);
          throw new Error("boom");
        },
        { ahead, keyed: held },
      ),
    ).rejects.toThrow("boom");
    expect(ahead.alone).toBe(false);
    await held.rollback();
    expect(await count("select n from probe where id = 'ahead-held'")).toBe(0);
  });

  it("leaves the audit trail out of a transaction opened with recordChanges: false, and only that one", async () => {
    const seen = await Promise.all([
      t.transact(async (tx) => tx.recordsChanges),
      t.transact(async (tx) => tx.recordsChanges, { recordChanges: false }),
    ]);
    expect(seen).toEqual([true, false]);
  });

  it("delivers a job sent in a committed transaction within milliseconds (LISTEN/NOTIFY)", async () => {
    let sentAt = 0;
    const received = new Promise<number>((resolve) => {
      void t.boss.registerWorker<{ n: number }>("latency-probe", async () => {
        resolve(performance.now() - sentAt);
      });
    });
    await new Promise((r) => setTimeout(r, 300)); // let the worker's first empty fetch pass
    sentAt = performance.now();
    await t.transact((tx) => tx.enqueue("latency-probe", { n: 1 }));
    expect(await received).toBeLessThan(500);
  });
});

describe("row writer", () => {
  const writer = () =>
    createRowWriter(t.db.pool, t.boss.pgboss, {
      table: "probe",
      columns: { id: "text", n: "integer" },
      queue: "tx-probe",
      job: { retryLimit: 3 },
    });

  it("writes the row and its job in one statement, with the job's data and options", async () => {
    await writer().write(["one-statement", 7], { id: "one-statement" });
    expect(await count("select count(*) as n from probe where id = 'one-statement' and n = 7")).toBe(1);
    const { rows } = await t.db.pool.query<{ retry_limit: number }>(
      "select retry_limit from pgboss.job where name = 'tx-probe' and data->>'id' = 'one-statement'",
    );
    expect(rows).toEqual([{ retry_limit: 3 }]);
  });

  it("batches concurrent writes; a failing row fails alone and leaves no job", async () => {
    await t.db.pool.query("insert into probe (id, n) values ('taken', 0)");
    const w = writer();
    const ids = Array.from({ length: 20 }, (_, i) => (i === 7 ? "taken" : `batch-${i}`));
    const results = await Promise.allSettled(ids.map((id, i) => w.write([id, i], { id: `${id}-${i}` })));
    expect(results.map((r) => r.status)).toEqual(ids.map((id) => (id === "taken" ? "rejected" : "fulfilled")));
    expect(String((results[7] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    expect(await count("select count(*) as n from probe where id like 'batch-%'")).toBe(19);
    expect(
      await count("select count(*) as n from pgboss.job where name = 'tx-probe' and data->>'id' like 'batch-%'"),
    ).toBe(19);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'taken-7'")).toBe(0);
  });

  it("delivers the job to a worker", async () => {
    let deliver!: (data: unknown) => void;
    const received = new Promise<unknown>((resolve) => (deliver = resolve));
    await t.boss.registerWorker<{ id: string }>("with-job-probe", async (job) => deliver(job.data));
    await createRowWriter(t.db.pool, t.boss.pgboss, {
      table: "probe",
      columns: { id: "text", n: "integer" },
      queue: "with-job-probe",
    }).write(["delivered", 1], { id: "delivered" });
    expect(await received).toEqual({ id: "delivered" });
  });
});

describe("row writer under a held transaction (a request with an Idempotency-Key)", () => {
  const writer = () =>
    createRowWriter(
      t.db.pool,
      t.boss.pgboss,
      { table: "probe", columns: { id: "text", n: "integer" }, queue: "tx-probe" },
      t.transact,
    );
  // The outcome goes into a row of the same table, so one xmin shows one commit.
  const outcome = (id: string): OutcomeRecord => ({
    item: id,
    recordAll: async (q, items) => {
      await q.query("insert into probe (id, n) select unnest($1::text[]), -1", [items]);
    },
  });
  const xmins = async (ids: string[]) =>
    (
      await t.db.pool.query<{ xmin: string }>("select xmin::text from probe where id = any($1::text[])", [ids])
    ).rows.map((r) => r.xmin);

  it("defers the write to the outcome: nothing before commit, then row, job and outcome in one transaction; rollback writes nothing", async () => {
    const w = writer();
    const held = createHeldTransaction({ onOpen: async () => undefined });
    await w.write(["deferred", 1], { id: "deferred" }, held);
    expect(held.holding).toBe(true);
    expect(await count("select count(*) as n from probe where id = 'deferred'")).toBe(0);
    await held.commit(outcome("deferred-outcome"));
    const both = await xmins(["deferred", "deferred-outcome"]);
    expect(both.length).toBe(2);
    expect(both[0]).toBe(both[1]);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'deferred'")).toBe(1);

    const dropped = createHeldTransaction({ onOpen: async () => undefined });
    await w.write(["dropped", 1], { id: "dropped" }, dropped);
    await dropped.rollback();
    expect(await count("select count(*) as n from probe where id = 'dropped'")).toBe(0);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'dropped'")).toBe(0);
  });

  it("a deferred write followed by a transaction of the same request goes into that transaction and commits with it", async () => {
    const w = writer();
    const held = createHeldTransaction({ onOpen: async () => undefined });
    await w.write(["then-tx-row", 1], { id: "then-tx-row" }, held);
    await t.transact((tx) => tx.query("insert into probe (id, n) values ('then-tx-other', 2)"), { keyed: held });
    expect(await count("select count(*) as n from probe where id like 'then-tx-%'")).toBe(0);
    await held.commit(outcome("then-tx-outcome"));
    const all = await xmins(["then-tx-row", "then-tx-other", "then-tx-outcome"]);
    expect(all.length).toBe(3);
    expect(new Set(all).size).toBe(1);
  });

  it("only what is opened with the handle is held: a transaction or write without it commits at once", async () => {
    const w = writer();
    const held = createHeldTransaction({ onOpen: async () => undefined });
    await t.transact((tx) => tx.query("insert into probe (id, n) values ('keyed-tx', 1)"), { keyed: held });
    await t.transact((tx) => tx.query("insert into probe (id, n) values ('unkeyed-tx', 1)"));
    await w.write(["unkeyed-row", 1], { id: "unkeyed-row" });
    expect(await count("select count(*) as n from probe where id in ('unkeyed-tx', 'unkeyed-row')")).toBe(2);
    expect(await count("select count(*) as n from probe where id = 'keyed-tx'")).toBe(0);
    await held.commit(outcome("keyed-outcome"));
    const both = await xmins(["keyed-tx", "keyed-outcome"]);
    expect(both.length).toBe(2);
    expect(both[0]).toBe(both[1]);
  });

  it("a batch whose outcome cannot be recorded for one request fails that request alone", async () => {
    const w = writer();
    const requests = Array.from({ length: 10 }, (_, i) => {
      const held = createHeldTransaction({ onOpen: async () => undefined });
      return { id: `fenced-${i}`, held, ready: w.write([`fenced-${i}`, i], { id: `fenced-${i}` }, held) };
    });
    await Promise.all(requests.map((r) => r.ready));
    const refuse: OutcomeRecord = {
      item: "refused",
      recordAll: async (q, items) => {
        if (items.includes("refused")) throw new Error("claim lost");
        await q.query("select 1");
      },
    };
    const results = await Promise.allSettled(
      requests.map((r, i) => r.held.commit(i === 3 ? refuse : { ...refuse, item: `ok-${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(requests.map((_, i) => (i === 3 ? "rejected" : "fulfilled")));
    expect(await count("select count(*) as n from probe where id like 'fenced-%'")).toBe(9);
    expect(await count("select count(*) as n from probe where id = 'fenced-3'")).toBe(0);
    expect(await count("select count(*) as n from pgboss.job where data->>'id' = 'fenced-3'")).toBe(0);
  });
});

describe("boss", () => {
  it("drains a backlog at once: a worker started after its jobs were sent does not wait a poll per job", async () => {
    await t.boss.pgboss.createQueue("backlog-probe", { notify: true });
    for (let i = 0; i < 5; i++) await t.transact((tx) => tx.enqueue("backlog-probe", { i }));
    const other = await openTestDatabase({ url: t.url });
    try {
      let done = 0;
      const all = new Promise<void>((resolve) => {
        void other.boss.registerWorker("backlog-probe", async () => {
          if (++done === 5) resolve();
        });
      });
      const started = performance.now();
      await all;
      // without the refetch after a full fetch, each job after the first waits out the 30 s NOTIFY backstop poll
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      await other.close();
    }
  });

  it("stop() waits for a running job to finish", async () => {
    const other = await openTestDatabase({ url: t.url });
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let finished = false;
    await other.boss.registerWorker("slow-probe", async () => {
      started();
      await new Promise((r) => setTimeout(r, 400));
      finished = true;
    });
    const id = await other.transact((tx) => tx.enqueue("slow-probe", {}));
    await running;
    await other.close();
    expect(finished).toBe(true);
    const { rows } = await t.db.pool.query<{ state: string }>("select state from pgboss.job where id = $1", [id]);
    expect(rows[0]?.state).toBe("completed");
  });

  it("registers no worker when ROLE=api, but creates the queue so the API can send", async () => {
    const api = await openTestDatabase({ url: t.url, role: "api" });
    try {
      let ran = false;
      await api.boss.registerWorker("api-only-probe", async () => {
        ran = true;
      });
      expect(await api.transact((tx) => tx.enqueue("api-only-probe", {}))).toBeTypeOf("string");
      await new Promise((r) => setTimeout(r, 200));
      expect(ran).toBe(false);
    } finally {
      await api.close();
    }
  });
});

describe("migrations and platform settings", () => {
  it("are applied, recorded, and the single platform row exists", async () => {
    expect(await t.db.readiness()).toBe(true);
    expect(await count("select count(*) as n from mikro_orm_migrations")).toBe(migrations.length);
    expect(await count("select count(*) as n from platform_settings")).toBe(1);
    await expect(t.db.pool.query("insert into platform_settings (id) values (2)")).rejects.toThrow(/check/);
  });

  it("is read by a named statement: each connection parses and plans it once", async () => {
    const prepared = await t.transact(async (tx) => {
      await getPlatformSettings(tx);
      await getPlatformSettings(tx);
      return tx.query<{ name: string }>("select name from pg_prepared_statements");
    });
    expect(prepared.map((p) => p.name)).toContain("platform_settings");
  });

  it("switches the partner API and records when", async () => {
    const at = new Date("2026-11-22T10:00:00.000Z");
    await t.transact((tx) => setPartnerApi(tx, false, at));
    expect(await getPlatformSettings(t.db)).toEqual({ status: "operational", partnerApiEnabled: false });
    const { rows } = await t.db.pool.query<{ updated_at: Date }>("select updated_at from platform_settings");
    expect(rows[0]?.updated_at.toISOString()).toBe(at.toISOString());
    await setPartnerApi(t.db, true, new Date());
  });
});

describe("runQuery", () => {
  const named = { name: "run_query_probe", text: "select $1::text as v, count(*)::int as n from probe where id = $1" };

  it("runs a named statement and a text on the pool and on a checked-out connection, each with its values", async () => {
    const pool = t.db.pool;
    await pool.query("insert into probe (id) values ('rq')");
    expect((await runQuery(pool, named, ["rq"])).rows).toEqual([{ v: "rq", n: 1 }]);
    expect((await runQuery(pool, named, ["none"])).rows).toEqual([{ v: "none", n: 0 }]);
    expect((await runQuery(pool, "select $1::int + 1 as n", [41])).rows).toEqual([{ n: 42 }]);
    const client = await pool.connect();
    try {
      expect((await runQuery(client, named, ["rq"])).rows).toEqual([{ v: "rq", n: 1 }]);
      // the statement is prepared on this connection once and executed by name afterwards
      expect((await runQuery(client, named, ["rq"])).rows).toEqual([{ v: "rq", n: 1 }]);
      const prepared = await client.query("select count(*)::int as n from pg_prepared_statements where name = $1", [
        named.name,
      ]);
      expect(prepared.rows).toEqual([{ n: 1 }]);
    } finally {
      client.release();
    }
  });

  it("rejects with the database's error and gives the connection back to the pool", async () => {
    // one connection: a statement after the failed ones waits forever unless each gave it back
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    try {
      const bad = { name: "run_query_bad", text: "select 1 / $1::int as n" };
      await expect(runQuery(pool, bad, [0])).rejects.toMatchObject({ code: "22012" });
      await expect(runQuery(pool, "select nothing from nowhere", [])).rejects.toMatchObject({ code: "42P01" });
      expect((await runQuery(pool, bad, [2])).rows).toEqual([{ n: 0 }]);
      expect(pool.idleCount).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
