import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { entities } from "./entities.ts";
import { migrations } from "./migrations/index.ts";

/**
 * MikroORM on one connection URL. Entities come from defineEntity, so the default metadata provider needs
 * no decorators, reflect-metadata or ts-morph, and nothing is discovered from files.
 * Pool: 10 connections is plenty for 2 cores (PostgreSQL work, not connection count, is the limit); the
 * plain pg pool in index.ts and pg-boss hold their own, well under max_connections.
 */
export async function createOrm(url: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: url,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    debug: false,
    allowGlobalContext: false,
    // Migrations are classes listed in migrations/index.ts: no globbing, no TypeScript loader, no snapshot file.
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
  });
}

/** Applies pending migrations in one transaction. Callers serialize concurrent starts (see openDatabase). */
export async function migrate(orm: MikroORM): Promise<void> {
  try {
    await orm.migrator.up();
  } catch (err) {
    throw new MigrationError(err);
  }
}

/** A migration failed: pending migrations run in one transaction (allOrNothing), so none of them was applied. */
export class MigrationError extends Error {
  override name = "MigrationError";
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Database migration failed, nothing was applied (the schema is as it was before this start): ${reason}`, { cause });
  }
}

export async function pendingMigrations(orm: MikroORM): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
