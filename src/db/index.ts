import { join } from "node:path";
import type { MikroORM } from "@mikro-orm/postgresql";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded.ts";
import { createOrm, migrate } from "./orm.ts";

export interface Database {
  orm: MikroORM;
  url: string;
  /** Where session state works (LISTEN, advisory locks): DATABASE_DIRECT_URL behind PgBouncer, else `url`. */
  sessionUrl: string;
  /**
   * A plain node-postgres pool for hot read paths outside transactions (`db.pool.query(text, params)`):
   * measured at several times the throughput of a query through the ORM's Kysely bridge.
   */
  pool: pg.Pool;
  /** True when the database answers within 2 s (migrations were applied before openDatabase returned). */
  readiness(): Promise<boolean>;
  close(): Promise<void>;
}

export const EMBEDDED_PORT = 5433;

/**
 * Opens the database: DATABASE_URL when set, else an embedded PostgreSQL with data in `${dataDir}/pg`;
 * then applies pending migrations under an advisory lock so concurrent starts do not race.
 *
 * Lifecycle (composed in app.ts): openDatabase -> startBoss({ url: db.url }) -> createTransact(db.orm,
 * boss.pgboss) -> modules register workers -> servers listen. Shutdown runs backwards: servers drain ->
 * boss.stop() (waits for running jobs) -> db.close() (pool, ORM, then the embedded PostgreSQL last).
 */
export async function openDatabase(config: Pick<Config, "databaseUrl" | "dataDir"> & Partial<Pick<Config, "embeddedPgPort" | "databaseDirectUrl">>, logger: Logger): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    embedded = await startEmbeddedPostgres({ dir: join(config.dataDir, "pg"), port: config.embeddedPgPort ?? EMBEDDED_PORT, logger });
    url = embedded.url;
  }
  const orm = await createOrm(url).catch(async (err: unknown) => {
    await embedded?.stop();
    throw err;
  });
  const sessionUrl = config.databaseDirectUrl ?? url;
  try {
    // The lock is a session lock: behind PgBouncer, migrations run on a direct connection of their own.
    const migrator = sessionUrl === url ? orm : await createOrm(sessionUrl, 2); // the lock holds one connection, migrations use another
    try {
      await withMigrationLock(migrator.em.getKysely<unknown>(), () => migrate(migrator));
    } finally {
      if (migrator !== orm) await migrator.close(true);
    }
  } catch (err) {
    await orm.close(true);
    await embedded?.stop();
    throw err;
  }
  // connectionTimeoutMillis: a lost database answers 503 within seconds instead of hanging requests.
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000 });
  // PgBouncer (transaction pooling, before 1.21) cannot keep a named statement between transactions.
  if (config.databaseDirectUrl !== undefined) sendUnnamedStatements(pool);
  pool.on("error", (err) => logger.warn({ err }, "idle database connection failed"));
  return {
    orm,
    url,
    sessionUrl,
    pool,
    // Migrations ran before openDatabase returned (it throws otherwise), so answering is all that is left.
    async readiness() {
      try {
        await withTimeout(pool.query("select 1"), 2_000);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      try {
        await pool.end();
        await orm.close(true);
      } finally {
        await embedded?.stop();
      }
    },
  };
}

function sendUnnamedStatements(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (first: unknown, ...rest: unknown[]) => {
    if (typeof first === "object" && first !== null && "name" in first) {
      const { name: _name, ...unnamed } = first as Record<string, unknown>;
      return query(unnamed, ...rest);
    }
    return query(first, ...rest);
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
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
