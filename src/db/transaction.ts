import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { fromKysely, type PgBoss, type SendOptions } from "pg-boss";
import type { Kysely } from "kysely";

/** What a module gets inside one database transaction. */
export interface Tx {
  /** The ORM, bound to the transaction. */
  em: EntityManager;
  /** Kysely bound to the same transaction, for hot paths: `sql\`...\`.execute(tx.db)`. */
  db: Kysely<unknown>;
  /** Enqueues a pg-boss job in the same transaction: a rollback removes the job with the rows. */
  enqueue(queue: string, data: object, options?: SendOptions): Promise<string | null>;
}

export type Transact = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/**
 * The one way to change state: entities, event rows and jobs commit or roll back together
 * (never "write, then hope to enqueue").
 */
export function createTransact(orm: MikroORM, boss: PgBoss): Transact {
  return (work) =>
    orm.em.fork().transactional(async (em) => {
      const db = em.getKysely() as unknown as Kysely<unknown>;
      const boundBoss = fromKysely(em.getKysely());
      return work({
        em,
        db,
        enqueue: (queue, data, options) => boss.send(queue, data, { ...options, db: boundBoss }),
      });
    });
}
