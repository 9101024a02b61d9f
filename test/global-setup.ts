import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import pg from "pg";
import { pino } from "pino";
import { freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { openDatabase } from "../src/db/index.ts";
import { startBoss } from "../src/jobs/boss.ts";
import { findPersonalData } from "./helpers/personal-data.ts";
import { buildServer } from "../scripts/build-server.ts";

export { freePort };

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the test cluster's `postgres` database; test files clone `hotelops_template` through it. */
    DATABASE_URL_ADMIN: string;
    /** The same URL under the name the foundation brief used; prefer `freshDatabaseUrl()` over either. */
    DATABASE_URL_BASE: string;
    /** Where test processes write the service's log lines (test/helpers/logs.ts); scanned for personal data at the end. */
    TEST_LOG_DIR: string;
  }
}

export const TEMPLATE = "hotelops_template";

/**
 * One embedded PostgreSQL for the whole run (fresh data directory, free port, fsync off) and a template
 * database holding our migrations and pg-boss's schema, which every test file clones (test/helpers/db.ts).
 * With DATABASE_URL set (`npm run test:external-pg`), that server is used instead: the URL names a maintenance
 * database on a throw-away server where the run may create databases (the template and one per test file).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // the tests that start the service as a process run `npm start`'s command: the compiled dist/main.js of these sources
  await buildServer();
  const dir = mkdtempSync(join(tmpdir(), "hotelops-test-pg-"));
  const logDir = mkdtempSync(join(tmpdir(), "hotelops-test-logs-"));
  project.provide("TEST_LOG_DIR", logDir);
  const logger = pino({ level: "silent" });
  const external = process.env.DATABASE_URL;
  // Test files and the processes they start choose their database themselves; none may inherit this one.
  delete process.env.DATABASE_URL;
  const server =
    external === undefined
      ? await startEmbeddedPostgres({ dir, port: await freePort(), logger, database: TEMPLATE, durable: false })
      : await templateOn(external);
  try {
    const db = await openDatabase({ databaseUrl: server.url, dataDir: dir }, logger);
    const boss = await startBoss({ pool: db.pool, url: server.url, role: "api", logger });
    await boss.stop();
    await db.close();
    const admin = external ?? server.url.replace(`/${TEMPLATE}`, "/postgres");
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
    // Personal data in any log line of the whole run fails it (the lines are kept for a look when it does).
    const leaks = findPersonalData(logDir);
    if (leaks.length > 0)
      throw new Error(
        `personal data in the service's logs during the tests (${logDir}):\n${leaks.slice(0, 20).join("\n")}`,
      );
    rmSync(logDir, { recursive: true, force: true });
  };
}

/** An external server: a fresh template database on it (dropped first if a previous run left one). */
async function templateOn(url: string): Promise<{ url: string; stop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${TEMPLATE} with (force)`).catch(async () => {
      await admin.query(`alter database ${TEMPLATE} is_template false`);
      await admin.query(`drop database ${TEMPLATE} with (force)`);
    });
    await admin.query(`create database ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  return { url: new URL(`/${TEMPLATE}`, url).href, stop: async () => undefined };
}
