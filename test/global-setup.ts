import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import pg from "pg";
import { pino } from "pino";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { openDatabase } from "../src/db/index.ts";
import { startBoss } from "../src/jobs/boss.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the test cluster's `postgres` database; test files clone `hotelops_template` from it. */
    DATABASE_URL_ADMIN: string;
  }
}

export const TEMPLATE = "hotelops_template";

/** One embedded PostgreSQL for the whole run, and a migrated template database every test file clones. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "hotelops-test-pg-"));
  const logger = pino({ level: "silent" });
  const server = await startEmbeddedPostgres({ dir, port: await freePort(), logger, database: TEMPLATE });
  const db = await openDatabase({ databaseUrl: server.url, dataDir: dir }, logger);
  const boss = await startBoss({ url: server.url, role: "api", logger });
  await boss.stop();
  await db.close();
  const admin = server.url.replace(`/${TEMPLATE}`, "/postgres");
  // Nobody may stay connected to a template while it is cloned.
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`update pg_database set datistemplate = true where datname = '${TEMPLATE}'`);
  await client.end();
  project.provide("DATABASE_URL_ADMIN", admin);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
