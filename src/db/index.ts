import { join } from "node:path";
import type { MikroORM } from "@mikro-orm/postgresql";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded.ts";
import { createOrm, migrate, pendingMigrations } from "./orm.ts";

export interface Database {
  orm: MikroORM;
  url: string;
  /**
   * A plain node-postgres pool for hot read paths outside transactions (`db.pool.query(text, params)`):
   * measured at several times the throughput of a query through the ORM's Kysely bridge.
   */
  pool: pg.Pool;
  /** True when the database answers and no migration is pending. */
  readiness(): Promise<boolean>;
  close(): Promise<void>;
}

export const EMBEDDED_PORT = 5433;

/**
 * Opens the database: DATABASE_URL when set, else an embedded PostgreSQL with data in `${dataDir}/pg`;
 * then applies pending migrations under an advisory lock so concurrent starts do not race.
 */
export async function openDatabase(config: Pick<Config, "databaseUrl" | "dataDir"> & Partial<Pick<Config, "embeddedPgPort">>, logger: Logger): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    embedded = await startEmbeddedPostgres({ dir: join(config.dataDir, "pg"), port: config.embeddedPgPort ?? EMBEDDED_PORT, logger });
    url = embedded.url;
  }
  const orm = await createOrm(url);
  try {
    const conn = orm.em.getKysely() as unknown as Kysely<unknown>;
    await withMigrationLock(conn, () => migrate(orm));
  } catch (err) {
    await orm.close(true);
    await embedded?.stop();
    throw err;
  }
  let migrated = true;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on("error", (err) => logger.warn({ err }, "idle database connection failed"));
  return {
    orm,
    url,
    pool,
    async readiness() {
      try {
        if (!migrated) migrated = (await pendingMigrations(orm)) === 0;
        await pool.query("select 1");
        return migrated;
      } catch {
        return false;
      }
    },
    async close() {
      await pool.end();
      await orm.close(true);
      await embedded?.stop();
    },
  };
}

async function withMigrationLock(db: Kysely<unknown>, run: () => Promise<void>): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(726017)`.execute(conn);
    try {
      await run();
    } finally {
      await sql`select pg_advisory_unlock(726017)`.execute(conn);
    }
  });
}
