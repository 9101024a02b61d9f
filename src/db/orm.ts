import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { entities } from "./entities.ts";
import { migrations } from "./migrations/index.ts";

/** MikroORM on one connection URL; entities come from defineEntity (no decorators, no TS metadata). */
export async function createOrm(url: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: url,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    debug: false,
    allowGlobalContext: false,
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, snapshot: false, silent: true },
  });
}

/** Applies pending migrations; safe to call from several processes (the migrator takes a lock). */
export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}

export async function pendingMigrations(orm: MikroORM): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
