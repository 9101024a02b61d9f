import type { Queryable } from "./queryable.ts";
import type { Ahead, Tx } from "./transaction.ts";

/**
 * The transaction of a request whose outcome must commit together with its writes (an idempotent write): the
 * first transaction the RPC opens with it (`transact(work, keyed)`, the `Keyed` side of this handle, which the
 * interceptor hands the RPC in its context values and the RPC passes on by argument) stays open after its work
 * returns, until whoever holds it (the idempotency interceptor) knows the response and either records it in that
 * transaction and commits (`commit`) or rolls everything back (`rollback`). A crash at any point leaves either
 * both the writes and the stored outcome, or neither. Later `transact(work, keyed)` calls of the same RPC run
 * inside it (a savepoint each); a transaction opened without the handle is not part of it.
 *
 * A batched row writer may instead defer the RPC's one write (`RowWriter.write(row, data, keyed)`): nothing is written until the outcome is
 * known, then the row and the outcome commit together in the writer's batch (one transaction for the batch, no
 * connection held while the response is built). Should the RPC open a transaction after deferring, the deferred
 * write goes into that transaction first and everything commits there as above.
 */
export interface HeldTransaction {
  /** True once the RPC opened its transaction or deferred a write, and it waits for commit/rollback. */
  readonly holding: boolean;
  /** Records the outcome with the RPC's writes and commits; rejects (nothing committed) when that fails. */
  commit(record: OutcomeRecord): Promise<void>;
  /** Rolls the held transaction back, or drops the deferred write (the RPC failed in a way that must not be kept). */
  rollback(): Promise<void>;
}

/**
 * The outcome to commit with the writes: one item of a recorder that records many in one statement (a batch of
 * deferred writes records the outcomes of all its requests at once).
 */
export interface OutcomeRecord<T = unknown> {
  item: T;
  /** Records the items in `q`'s transaction; throws when any cannot be recorded (then nothing may commit). */
  recordAll(q: Queryable, items: readonly T[]): Promise<void>;
}

/** A write deferred to the commit of its RPC's outcome (see HeldTransaction). */
interface DeferredWrite {
  /** Writes now, inside the transaction the RPC opened after deferring. */
  into(tx: Tx): Promise<void>;
  /**
   * Writes and records the outcome in one transaction and commits (`commitDelayMs`: the test hook below, between
   * recording and COMMIT); rejects when nothing was committed.
   */
  commit(record: OutcomeRecord, commitDelayMs: number): Promise<void>;
}

export interface HoldOptions {
  /** Runs first in the transaction when it opens (locks the idempotency row); throwing aborts the work. */
  onOpen(tx: Tx): Promise<void>;
  /** Test hook: waits this long between recording the outcome and COMMIT (widens the crash window). */
  commitDelayMs?: number;
}

type Decision = { record: OutcomeRecord } | { abort: true };
type Begin = (body: (tx: Tx) => Promise<void>) => Promise<void>;

/**
 * What the idempotency interceptor hands a keyed RPC (src/server/context.ts, `keyedOf`) and the RPC passes on, by
 * argument, to the transactions it opens (`transact(work, keyed)`) and to a row writer's write.
 */
export interface Keyed {
  /** True once the outcome was committed or rolled back: a transaction opened after that is an ordinary one. */
  readonly done: boolean;
  /** Opens the held transaction (`begin`), or joins it in a savepoint when it is already open. */
  run<T>(begin: Begin, work: (tx: Tx) => Promise<T>, ahead?: Ahead<unknown>): Promise<T>;
  defer(write: DeferredWrite): boolean;
}

class Held implements HeldTransaction, Keyed {
  #state: "idle" | "open" | "done" = "idle";
  #tx: Tx | undefined;
  #committed: Promise<void> = Promise.resolve();
  #decide: (d: Decision) => void = () => undefined;
  readonly #decision = new Promise<Decision>((resolve) => (this.#decide = resolve));
  #savepoints = 0;
  #deferred: DeferredWrite | undefined;
  readonly #opts: HoldOptions;

  constructor(opts: HoldOptions) {
    this.#opts = opts;
  }

  get holding(): boolean {
    return (this.#state === "open" && this.#tx !== undefined) || this.#deferred !== undefined;
  }
  get done(): boolean {
    return this.#state === "done";
  }

  defer(write: DeferredWrite): boolean {
    if (this.#state !== "idle" || this.#deferred !== undefined) return false;
    this.#deferred = write;
    return true;
  }

  run<T>(begin: Begin, work: (tx: Tx) => Promise<T>, ahead?: Ahead<unknown>): Promise<T> {
    if (this.#state === "open" && this.#tx !== undefined) return this.#join(this.#tx, work, ahead);
    this.#state = "open";
    const deferred = this.#deferred;
    this.#deferred = undefined;
    return new Promise<T>((resolve, reject) => {
      let returned = false;
      this.#committed = begin(async (held) => {
        // The RPC's own work must not commit early: its last statement is an ordinary one here.
        const tx: Tx = { ...held, queryLast: (text, params) => held.query(text, params) };
        // The lock leaves with the work's first statements (pipelined: they run after it, in order); a lost claim
        // fails the transaction, whatever the work did in it rolls back.
        const locked = this.#opts.onOpen(tx);
        if (deferred !== undefined) {
          await locked;
          await deferred.into(tx);
        }
        this.#tx = tx;
        const [lock, worked] = await Promise.allSettled([locked, work(tx)]);
        if (lock.status === "rejected") throw lock.reason;
        if (worked.status === "rejected") throw worked.reason;
        resolve(worked.value);
        returned = true;
        const decision = await this.#decision;
        if ("abort" in decision) throw new RolledBack();
        if (this.#opts.commitDelayMs) {
          await decision.record.recordAll(tx, [decision.record.item]);
          await new Promise((r) => setTimeout(r, this.#opts.commitDelayMs));
        } else {
          // The outcome is the transaction's last statement: it leaves with the COMMIT.
          await decision.record.recordAll({ query: (text, params) => held.queryLast(text, params) }, [
            decision.record.item,
          ]);
        }
      });
      this.#committed.catch((err: unknown) => {
        if (returned) return;
        // The work failed and rolled back, the deferred write with it: nothing is held; a later transact may open
        // a new one.
        this.#state = "idle";
        this.#tx = undefined;
        reject(err);
      });
    });
  }

  async commit(record: OutcomeRecord): Promise<void> {
    const deferred = this.#state === "idle" ? this.#deferred : undefined;
    this.#state = "done";
    this.#deferred = undefined;
    if (deferred !== undefined) return deferred.commit(record, this.#opts.commitDelayMs ?? 0);
    this.#decide({ record });
    await this.#committed;
  }

  async rollback(): Promise<void> {
    this.#state = "done";
    this.#deferred = undefined;
    this.#decide({ abort: true });
    await this.#committed.catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
  }

  async #join<T>(tx: Tx, work: (tx: Tx) => Promise<T>, ahead: Ahead<unknown> | undefined): Promise<T> {
    const savepoint = `held_${++this.#savepoints}`;
    const saved = tx.query(`savepoint ${savepoint}`);
    // already in a transaction: the statement meant to run ahead of it becomes part of it
    ahead?.run(tx, false);
    await saved;
    try {
      const result = await work(tx);
      await tx.query(`release savepoint ${savepoint}`);
      return result;
    } catch (err) {
      await tx.query(`rollback to savepoint ${savepoint}`);
      throw err;
    }
  }
}

class RolledBack extends Error {
  constructor() {
    super("held transaction rolled back");
  }
}

/** The handle of one keyed call: the interceptor commits or rolls it back, the RPC passes it on as `Keyed`. */
export function createHeldTransaction(opts: HoldOptions): HeldTransaction & Keyed {
  return new Held(opts);
}
