import { join } from "node:path";
import pg from "pg";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded.ts";
import { migrate } from "./orm.ts";
import { TracedClient } from "../observability/pg-spans.ts";
import { poolQueryable, sendStatementsUnnamed, type Queryable } from "./queryable.ts";
import { createReplicaReads, type ReplicaReads } from "./replica.ts";

/**
 * The process's one PostgreSQL pool and the one way to query it (`db.query<Row>(text, params)`, `$1`
 * placeholders). Requests, transactions (`createTransact`), pg-boss's statements and the migrations all take
 * their connections here (behind PgBouncer the migrations use two direct connections at start); the only other
 * connection is the LISTEN session (src/jobs/listen-session.ts).
 */
export interface Database extends Queryable {
  url: string;
  /** Where session state works (LISTEN, advisory locks): DATABASE_DIRECT_URL behind PgBouncer, else `url`. */
  sessionUrl: string;
  /** The pool itself, for hot paths that name a prepared statement (`runQuery(pool, { name, text }, values)`). */
  pool: pg.Pool;
  /**
   * Reads that may lag the primary by a bounded time (partner availability, ARI): the streaming replica of
   * DATABASE_REPLICA_URL while it is at most REPLICA_MAX_LAG_MS behind, else the pool (src/db/replica.ts).
   * Without a replica, the pool.
   */
  replicaReads: Queryable;
  /** The replica's reads when DATABASE_REPLICA_URL is set (its lag, for metrics and tests). */
  replica: ReplicaReads | undefined;
  /** True when the database answers within 2 s (migrations were applied before openDatabase returned). */
  readiness(): Promise<boolean>;
  close(): Promise<void>;
}

const EMBEDDED_PORT = 5433;
const DEFAULT_POOL_MAX = 10;

/**
 * Opens the database: DATABASE_URL when set, else an embedded PostgreSQL with data in `${dataDir}/pg`;
 * then applies pending migrations under an advisory lock so concurrent starts do not race.
 *
 * Lifecycle (composed in app.ts): openDatabase -> startBoss(db) -> createTransact(db, boss) -> services ->
 * workers -> servers listen. Shutdown runs backwards: servers drain -> boss.stop() (waits for running jobs) ->
 * db.close() (the pool, then the embedded PostgreSQL last).
 */
export async function openDatabase(
  config: Pick<Config, "databaseUrl" | "dataDir"> &
    Partial<
      Pick<
        Config,
        "embeddedPgPort" | "databasePoolMax" | "databaseDirectUrl" | "databaseReplicaUrl" | "replicaMaxLagMs"
      >
    >,
  logger: Logger,
  options: { traced?: boolean } = {},
): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    embedded = await startEmbeddedPostgres({
      dir: join(config.dataDir, "pg"),
      port: config.embeddedPgPort ?? EMBEDDED_PORT,
      logger,
    });
    url = embedded.url;
  }
  // connectionTimeoutMillis: a lost database answers 503 within seconds instead of hanging requests.
  // pipeline: statements a connection is given before the previous one answered go out at once, each with its own
  // result (node-postgres' pipelining; the types do not know the option yet). Code that awaits each statement runs
  // as before; a transaction's last statement and its COMMIT share one round trip (Tx.queryLast).
  const pool = new pg.Pool({
    connectionString: url,
    max: config.databasePoolMax ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: 5_000,
    types: { getTypeParser },
    // a span per statement when tracing is on (observability/pg-spans.ts)
    ...(options.traced === true ? { Client: TracedClient } : {}),
    ...({ pipeline: true } as pg.PoolConfig),
  });
  listenForErrors(pool, logger);
  const sessionUrl = config.databaseDirectUrl ?? url;
  // PgBouncer (transaction pooling, before 1.21) cannot keep a named statement between transactions.
  if (sessionUrl !== url) sendStatementsUnnamed(pool);
  try {
    // The migration lock is a session lock: behind PgBouncer, migrations run on direct connections of their own
    // (the lock holds one, the migrations use another).
    const migrationPool =
      sessionUrl === url
        ? pool
        : listenForErrors(new pg.Pool({ connectionString: sessionUrl, max: 2, types: { getTypeParser } }), logger);
    try {
      await withMigrationLock(migrationPool, () => migrate(migrationPool, sessionUrl));
    } finally {
      if (migrationPool !== pool) await migrationPool.end();
    }
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw err;
  }
  const replica =
    config.databaseReplicaUrl === undefined
      ? undefined
      : createReplicaReads({
          primary: pool,
          replicaUrl: config.databaseReplicaUrl,
          maxLagMs: config.replicaMaxLagMs ?? 1_000,
          poolMax: config.databasePoolMax ?? DEFAULT_POOL_MAX,
          logger,
          types: { getTypeParser },
        });
  return {
    ...poolQueryable(pool),
    url,
    sessionUrl,
    pool,
    replicaReads: replica ?? poolQueryable(pool),
    replica,
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
        await replica?.close();
        await pool.end();
      } finally {
        await embedded?.stop();
      }
    },
  };
}

/**
 * node-postgres's parsers, except `date`: a business date is a calendar day, so it stays "YYYY-MM-DD" text
 * (node-postgres would make it a Date at local midnight, a different instant in every time zone).
 */
const DATE_OID = 1082;
const getTypeParser = ((oid: number, format?: "text" | "binary") =>
  oid === DATE_OID && format !== "binary"
    ? (value: string) => value
    : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;

/**
 * Every connection of the pool has an 'error' listener for its whole life: the pool's own is taken off while a
 * connection is lent, and a connection that drops then (failover, a killed proxy, pg_terminate_backend) would
 * emit 'error' with nobody listening, which ends the process. The statement in flight rejects with the same
 * error; the pool discards the connection when it comes back and opens a new one for the next caller.
 */
function listenForErrors(pool: pg.Pool, logger: Logger): pg.Pool {
  // an idle connection's failure: the connection's own listener below logs it, the pool drops it
  pool.on("error", () => undefined);
  pool.on("connect", (client) =>
    client.on("error", (err) => logger.warn({ err: err.message }, "database connection failed")),
  );
  return pool;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Holds a session advisory lock on one pooled connection while `run` migrates on another (pool max >= 2). */
async function withMigrationLock(pool: pg.Pool, run: () => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock(726017)");
    try {
      await run();
    } finally {
      await client.query("select pg_advisory_unlock(726017)");
    }
  } finally {
    client.release();
  }
}
