import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import pg from "pg";
import { pino } from "pino";
import { freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { openDatabase } from "../src/db/index.ts";
import { startBoss } from "../src/jobs/boss.ts";

export { freePort };

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the test cluster's `postgres` database; test files clone `hotelops_template` through it. */
    DATABASE_URL_ADMIN: string;
    /** The same URL under the name the foundation brief used; prefer `freshDatabaseUrl()` over either. */
    DATABASE_URL_BASE: string;
  }
}

export const TEMPLATE = "hotelops_template";

/**
 * One embedded PostgreSQL for the whole run (fresh data directory, free port, fsync off) and a template
 * database holding our migrations and pg-boss's schema, which every test file clones (test/helpers/db.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "hotelops-test-pg-"));
  const logger = pino({ level: "silent" });
  const server = await startEmbeddedPostgres({ dir, port: await freePort(), logger, database: TEMPLATE, durable: false });
  try {
    const db = await openDatabase({ databaseUrl: server.url, dataDir: dir }, logger);
    const boss = await startBoss({ pool: db.pool, url: server.url, role: "api", logger });
    await boss.stop();
    await db.close();
    const admin = server.url.replace(`/${TEMPLATE}`, "/postgres");
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    // No session may stay connected to a template while it is cloned: refuse connections to it outright.
    await client.query(`alter database ${TEMPLATE} with is_template true allow_connections false`);
    await client.end();
    project.provide("DATABASE_URL_ADMIN", admin);
    project.provide("DATABASE_URL_BASE", admin);
  } catch (err) {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
