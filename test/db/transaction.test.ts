import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql, type Kysely } from "kysely";
import { pino } from "pino";
import { openDatabase, type Database } from "../../src/db/index.ts";
import { createTransact, type Transact } from "../../src/db/transaction.ts";
import { startBoss, type Boss } from "../../src/jobs/boss.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";

const logger = pino({ level: "silent" });
let db: Database;
let boss: Boss;
let transact: Transact;

beforeAll(async () => {
  db = await openDatabase({ databaseUrl: await freshDatabaseUrl(), dataDir: "/nonexistent" }, logger);
  boss = await startBoss({ url: db.url, role: "all", logger });
  transact = createTransact(db.orm, boss.pgboss);
  await boss.pgboss.createQueue("tx-probe");
  await sql`create table probe (id text primary key)`.execute(db.orm.em.getKysely() as unknown as Kysely<unknown>);
});
afterAll(async () => {
  await boss?.stop();
  await db?.close();
});

async function count(query: ReturnType<typeof sql<{ n: string }>>): Promise<number> {
  const r = await query.execute(db.orm.em.getKysely() as unknown as Kysely<unknown>);
  return Number(r.rows[0]?.n);
}

describe("transaction helper", () => {
  it("commits the row and the job together", async () => {
    await transact(async (tx) => {
      await sql`insert into probe (id) values ('committed')`.execute(tx.db);
      await tx.enqueue("tx-probe", { id: "committed" });
    });
    expect(await count(sql<{ n: string }>`select count(*) as n from probe where id = 'committed'`)).toBe(1);
    expect(await count(sql<{ n: string }>`select count(*) as n from pgboss.job where name = 'tx-probe' and data->>'id' = 'committed'`)).toBe(1);
  });

  it("rolls back both the row and the job", async () => {
    await expect(
      transact(async (tx) => {
        await sql`insert into probe (id) values ('rolled-back')`.execute(tx.db);
        await tx.enqueue("tx-probe", { id: "rolled-back" });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await count(sql<{ n: string }>`select count(*) as n from probe where id = 'rolled-back'`)).toBe(0);
    expect(await count(sql<{ n: string }>`select count(*) as n from pgboss.job where data->>'id' = 'rolled-back'`)).toBe(0);
  });

  it("delivers a job sent in a committed transaction within milliseconds (LISTEN/NOTIFY)", async () => {
    let sentAt = 0;
    const received = new Promise<number>((resolve) => {
      void boss.registerWorker<{ n: number }>("latency-probe", async () => {
        resolve(performance.now() - sentAt);
      });
    });
    await new Promise((r) => setTimeout(r, 300)); // let the worker's first empty poll pass
    sentAt = performance.now();
    await transact((tx) => tx.enqueue("latency-probe", { n: 1 }));
    const latency = await received;
    expect(latency).toBeLessThan(500);
  });
});

describe("migrations", () => {
  it("are applied and the platform row exists", async () => {
    expect(await db.readiness()).toBe(true);
    expect(await count(sql<{ n: string }>`select count(*) as n from platform_settings`)).toBe(1);
  });
});
