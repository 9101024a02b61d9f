import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { PostgresDialect } from "kysely";
import type pg from "pg";
import { migrations } from "./migrations/index.ts";

/**
 * MikroORM runs the schema migrations (src/db/migrations, one transaction, recorded in mikro_orm_migrations) and
 * nothing else: queries go through the pool as `$1` SQL (see docs/contributors/data-layer.md). It borrows connections from
 * the process's one pool through a Kysely dialect (MikroORM 7 accepts a dialect as `driverOptions`) whose
 * `end()` does nothing, so closing the ORM leaves the pool to its owner. No entities: nothing is discovered.
 */
export async function migrate(pool: pg.Pool, url: string): Promise<void> {
  const borrowed = { options: pool.options, connect: () => pool.connect(), end: async () => undefined };
  const orm = await MikroORM.init({
    clientUrl: url, // names the database only: no connection is made from it
    driverOptions: new PostgresDialect({ pool: borrowed }),
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    debug: false,
    allowGlobalContext: false,
    // Migrations are classes listed in migrations/index.ts: no globbing, no TypeScript loader, no snapshot file.
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
  });
  try {
    await orm.migrator.up();
  } catch (err) {
    throw new MigrationError(err);
  } finally {
    await orm.close(true);
  }
}

/** A migration failed: pending migrations run in one transaction (allOrNothing), so none of them was applied. */
export class MigrationError extends Error {
  override name = "MigrationError";
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Database migration failed, nothing was applied (the schema is as it was before this start): ${reason}`, {
      cause,
    });
  }
}
