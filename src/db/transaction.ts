import type { IsolationLevel } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { fromKysely, type PgBoss, type SendOptions } from "pg-boss";
import { CompiledQuery, type Kysely } from "kysely";
import { heldTransactionOf } from "./held-transaction.ts";

/** What a module gets inside one database transaction. Everything on it commits or rolls back together. */
export interface Tx {
  /** The ORM, bound to the transaction: `tx.em.persist(entity)` is flushed at commit. */
  em: EntityManager;
  /** Kysely bound to the same transaction: `` await sql`select ... where id = ${id}`.execute(tx.db) ``. */
  db: Kysely<unknown>;
  /**
   * Raw SQL with PostgreSQL's own `$1, $2` placeholders on the transaction's connection, for hot paths
   * (availability, counters). Rows come back as node-postgres returns them (snake_case columns).
   * Note: `tx.em.execute()` also runs on the transaction but takes `?` placeholders.
   */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Enqueues a pg-boss job in the same transaction: a rollback removes the job with the rows. */
  enqueue(queue: string, data: object, options?: Omit<SendOptions, "db">): Promise<string | null>;
  /** Enqueues one job per item (the queue's default options) in one statement, in the same transaction. */
  enqueueMany(queue: string, data: readonly object[]): Promise<void>;
}

export interface TransactOptions {
  /** Default: read committed. Serializable work must be ready to retry on 40001 (toAppError maps it to conflict). */
  isolationLevel?: IsolationLevel | `${IsolationLevel}`;
  readOnly?: boolean;
}

export type Transact = <T>(work: (tx: Tx) => Promise<T>, options?: TransactOptions) => Promise<T>;

/**
 * The one way to change state: entities, event rows and jobs commit or roll back together
 * (never "write, then hope to enqueue"). Pending `tx.em` changes are flushed before commit.
 */
export function createTransact(orm: MikroORM, boss: PgBoss): Transact {
  const open: Transact = (work, options = {}) =>
    orm.em.fork().transactional(async (em) => {
      // Inside transactional(), getKysely() returns the Kysely transaction that holds the connection.
      const db = em.getKysely<unknown>();
      const bossDb = fromKysely(em.getKysely());
      return work({
        em,
        db,
        async query<R>(text: string, params: readonly unknown[] = []) {
          const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]));
          return result.rows as R[];
        },
        enqueue: (queue, data, sendOptions) => boss.send(queue, data, { ...sendOptions, db: bossDb }),
        async enqueueMany(queue, data) {
          if (data.length > 0) await boss.insert(queue, data.map((d) => ({ data: d })), { db: bossDb });
        },
      });
    }, options);
  // An idempotent write holds its transaction open until its outcome is recorded in it (held-transaction.ts).
  return (work, options = {}) => {
    const held = heldTransactionOf(options);
    return held === undefined ? open(work, options) : held.run((body) => open(body, options), work);
  };
}
