import type pg from "pg";
import type { PgBoss, SendOptions } from "pg-boss";
import { runBossSql, runQuery, type Queryable, type Statement } from "./queryable.ts";
import type { Keyed } from "./held-transaction.ts";
import { pooledTransaction } from "./pooled-transaction.ts";
import { beforeDeadline } from "../lib/deadline.ts";

/** What a module gets inside one database transaction. Everything on it commits or rolls back together. */
export interface Tx extends Queryable {
  /** Enqueues a pg-boss job in the same transaction: a rollback removes the job with the rows. */
  enqueue(queue: string, data: object, options?: Omit<SendOptions, "db">): Promise<string | null>;
  /** Enqueues one job per item (the queue's default options) in one statement, in the same transaction. */
  enqueueMany(queue: string, data: readonly object[]): Promise<void>;
  /**
   * The work's LAST statement (nothing may follow it: another statement on this Tx throws). When the transaction
   * commits as soon as the work returns, the statement and COMMIT are sent together: row locks it takes (a hot
   * counter) are held for one round trip and the commit instead of two. Resolves once both succeeded; a failing
   * statement turns the COMMIT into a rollback and rejects with its error. In a held transaction (an idempotent
   * write records its outcome after the work) the work's is an ordinary statement; the outcome's record is the
   * last one.
   */
  queryLast<R = Record<string, unknown>>(text: string | Statement, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Adds a row to a batch that one statement writes at the end of the transaction: sent right before the work's
   * last statement (or the COMMIT) and pipelined with it, so the rows cost no round trip of their own. A failing
   * batch statement rolls the whole transaction back (the work's caller gets its error).
   */
  collect<T>(batch: Batch<T>, row: T): void;
  /** False only when the transaction was opened with `recordChanges: false` (see TransactOptions). */
  readonly recordsChanges: boolean;
}

/** Rows gathered during a transaction and written by one statement at its end (see Tx.collect). */
export interface Batch<T> {
  statement(rows: readonly T[]): { text: string | Statement; params: unknown[] };
}

/**
 * A statement that commits on its own ahead of a transaction (TransactOptions.ahead): sent on the transaction's
 * connection right before its BEGIN, so it costs no round trip of its own (it leaves with BEGIN and the work's first
 * statement), and a row lock it takes is released once it has run instead of when the transaction ends. A rollback
 * of the transaction keeps what it did. Inside a transaction already open (a held transaction, where the work runs
 * in a savepoint) it runs as the savepoint's first statement and is part of that transaction.
 */
export interface Ahead<R> {
  /** Its rows once it has run (rejects with its error); settles only if `ran`. */
  readonly rows: Promise<R[]>;
  /** True once it was sent. */
  readonly ran: boolean;
  /** True when it committed on its own (ran ahead of BEGIN), false when it ran inside an open transaction. */
  readonly alone: boolean;
  run(q: Queryable, alone: boolean): void;
}

export function aheadOf<R>(text: string | Statement, params: readonly unknown[]): Ahead<R> {
  let settle!: { resolve: (rows: R[]) => void; reject: (err: unknown) => void };
  const rows = new Promise<R[]>((resolve, reject) => (settle = { resolve, reject }));
  rows.catch(() => undefined);
  const ahead = {
    rows,
    ran: false,
    alone: false,
    run(q: Queryable, alone: boolean): void {
      if (ahead.ran) return;
      ahead.ran = true;
      ahead.alone = alone;
      q.query<R>(text, params).then(settle.resolve, settle.reject);
    },
  };
  return ahead;
}

type IsolationLevel = "read committed" | "repeatable read" | "serializable";

interface TransactOptions {
  /** Default: read committed. Serializable work must be ready to retry on 40001 (toAppError maps it to conflict). */
  isolationLevel?: IsolationLevel;
  readOnly?: boolean;
  /**
   * Default true. False leaves the audit trail out of this transaction (recordChange records nothing): for the
   * benchmark that measures what the trail costs, never for a business write.
   */
  recordChanges?: boolean;
  /** A statement to run ahead of BEGIN, committing on its own (see Ahead). */
  ahead?: Ahead<unknown>;
  /**
   * The handle of a keyed (Idempotency-Key) call, from its RPC handler (src/server/context.ts, `keyedOf`): a
   * read-write transaction opened with it is held open until the call's outcome is recorded in it, or joins the
   * one already held (held-transaction.ts). Undefined (no key, a job, a tool): an ordinary transaction.
   */
  keyed?: Keyed | undefined;
}

/**
 * `options` may be the keyed call's handle itself (`transact(work, keyed)`, `transact(work, actor.keyed)`): the same
 * as `{ keyed }`. Undefined there is an ordinary transaction.
 */
export type Transact = <T>(work: (tx: Tx) => Promise<T>, options?: TransactOptions | Keyed) => Promise<T>;

/**
 * The one way to change state: rows, event rows and jobs commit or roll back together (never "write, then hope
 * to enqueue"). One pooled connection holds the transaction (pooled-transaction.ts: BEGIN, COMMIT, rollback);
 * pg-boss's job insert runs on that same connection.
 */
export function createTransact(pool: pg.Pool, boss: PgBoss): Transact {
  const open = <T>(work: (tx: Tx) => Promise<T>, options: TransactOptions): Promise<T> =>
    pooledTransaction(
      pool,
      async (_, client, ending) => {
        let last = "none" as "none" | "sent" | "committed";
        const query = async <R>(text: string | Statement, params: readonly unknown[] = []): Promise<R[]> => {
          if (last !== "none") throw new Error("a statement after the transaction's last one (queryLast)");
          return (await runQuery(client, text, params)).rows as R[];
        };
        const bossDb = {
          executeSql: (text: string, values: unknown[] = []) => {
            if (last !== "none") throw new Error("a statement after the transaction's last one (queryLast)");
            return runBossSql(client, text, values);
          },
        };
        // Jobs pg-boss is still preparing (it looks its queue up first): queryLast waits until their INSERT was
        // sent, so the job leaves before the last statement and its COMMIT, in the same round trip when nothing
        // else waits.
        const preparing = new Set<Promise<unknown>>();
        // Batches gathered by collect(), written just before the end (in the order their first row came).
        const batches = new Map<Batch<unknown>, unknown[]>();
        const writeBatches = (): Promise<unknown>[] => {
          const sent = [...batches].map(([batch, rows]) => {
            const { text, params } = batch.statement(rows);
            return query(text, params);
          });
          batches.clear();
          return sent;
        };
        const prepare = <J>(send: (db: typeof bossDb) => Promise<J>): Promise<J> => {
          let sent!: () => void;
          const gate = new Promise<void>((resolve) => (sent = resolve));
          preparing.add(gate);
          const db = {
            executeSql: (text: string, values: unknown[] = []) => {
              sent();
              return bossDb.executeSql(text, values);
            },
          };
          const job = send(db);
          void job.finally(sent).catch(() => undefined);
          void gate.then(() => preparing.delete(gate));
          return job;
        };
        const result = await work({
          query,
          async queryLast<R>(text: string | Statement, params: readonly unknown[] = []): Promise<R[]> {
            while (preparing.size > 0) await Promise.all(preparing);
            const written = writeBatches();
            const rows = query<R>(text, params);
            last = "sent";
            // COMMIT leaves with the statement (and the collected rows): the statement's rejection is the outcome.
            await ending.commit([rows, ...written]);
            last = "committed";
            return rows;
          },
          collect<B>(batch: Batch<B>, row: B): void {
            if (last !== "none") throw new Error("a row collected after the transaction's last statement (queryLast)");
            const rows = batches.get(batch as Batch<unknown>);
            if (rows === undefined) batches.set(batch as Batch<unknown>, [row]);
            else rows.push(row);
          },
          recordsChanges: options.recordChanges !== false,
          enqueue: (queue, data, sendOptions) => prepare((db) => boss.send(queue, data, { ...sendOptions, db })),
          async enqueueMany(queue, data) {
            if (data.length > 0)
              await prepare((db) =>
                boss.insert(
                  queue,
                  data.map((d) => ({ data: d })),
                  { db },
                ),
              );
          },
        });
        if (last === "none") {
          // The collected rows leave with the COMMIT (a failed batch statement makes it a rollback).
          const written = writeBatches();
          last = "sent";
          await ending.commit(written);
        }
        return result;
      },
      {
        begin: `begin isolation level ${options.isolationLevel ?? "read committed"}${options.readOnly === true ? " read only" : ""}`,
        // A call whose deadline passes while it waits for a connection is abandoned before it writes (deadline.ts).
        connect: (p) => beforeDeadline(p.connect(), (late) => late.release()),
        beforeBegin: (q) => options.ahead?.run(q, true),
      },
    );
  // A keyed write holds its transaction open until its outcome is recorded in it (held-transaction.ts).
  return (work, given = {}) => {
    const options: TransactOptions = "run" in given ? { keyed: given } : given;
    const { keyed } = options;
    return keyed === undefined || keyed.done || options.readOnly === true
      ? open(work, options)
      : keyed.run((body) => open(body, options), work, options.ahead);
  };
}
