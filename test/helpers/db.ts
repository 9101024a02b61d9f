import { inject } from "vitest";
import pg from "pg";
import type { Role } from "../../src/config.ts";
import { openDatabase, type Database } from "../../src/db/index.ts";
import { createTransact, type Transact } from "../../src/db/transaction.ts";
import { startBoss, type Boss } from "../../src/jobs/boss.ts";
import { newId } from "../../src/lib/ids.ts";
import { testLogger } from "./logs.ts";

/** A database of its own for one test file, cloned from the migrated template (a file copy, tens of ms). */
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
        // PostgreSQL refuses a template another session is using; nobody may connect to ours, but retry
        // rather than fail a file if a clone ever overlaps with something that does.
        if (attempt > 50 || !String(err).includes("being accessed")) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await client.end();
  }
  return admin.replace(/\/postgres$/, `/${name}`);
}

export interface TestDatabase {
  url: string;
  db: Database;
  boss: Boss;
  transact: Transact;
  close(): Promise<void>;
}

/**
 * The database layer as app.ts wires it, on a fresh database: call in beforeAll, `close()` in afterAll.
 * ROLE decides whether `boss.registerWorker` starts workers (default `all`: it does).
 */
export async function openTestDatabase(options: { role?: Role; url?: string } = {}): Promise<TestDatabase> {
  const logger = testLogger();
  const url = options.url ?? (await freshDatabaseUrl());
  const db = await openDatabase({ databaseUrl: url, dataDir: "/nonexistent" }, logger);
  const boss = await startBoss({ pool: db.pool, url, role: options.role ?? "all", logger, graceMs: 2_000 }).catch(
    async (err: unknown) => {
      await db.close();
      throw err;
    },
  );
  return {
    url,
    db,
    boss,
    transact: createTransact(db.pool, boss.pgboss),
    async close() {
      try {
        await boss.stop();
      } finally {
        await db.close();
      }
    },
  };
}
