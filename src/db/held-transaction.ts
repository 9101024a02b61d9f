import { AsyncLocalStorage } from "node:async_hooks";
import type { Tx } from "./transaction.ts";

/**
 * The transaction of a request whose outcome must commit together with its writes (an idempotent write): the
 * first transaction the RPC opens through `transact` stays open after its work returns, until whoever holds it
 * (the idempotency interceptor) knows the response and either records it in that transaction and commits
 * (`commit`) or rolls everything back (`rollback`). A crash at any point leaves either both the writes and the
 * stored outcome, or neither. Later `transact` calls of the same RPC run inside it (a savepoint each).
 */
export interface HeldTransaction {
  /** True once the RPC opened its transaction and it waits for commit/rollback. */
  readonly holding: boolean;
  /** Records the outcome in the held transaction and commits; rejects (nothing committed) when that fails. */
  commit(record: (tx: Tx) => Promise<void>): Promise<void>;
  /** Rolls the held transaction back (the RPC failed in a way that must not be kept). */
  rollback(): Promise<void>;
}

export interface HoldOptions {
  /** Runs first in the transaction when it opens (locks the idempotency row); throwing aborts the work. */
  onOpen(tx: Tx): Promise<void>;
  /** Test hook: waits this long between recording the outcome and COMMIT (widens the crash window). */
  commitDelayMs?: number;
}

type Decision = { record: (tx: Tx) => Promise<void> } | { abort: true };
type Begin = (body: (tx: Tx) => Promise<void>) => Promise<void>;

class Held implements HeldTransaction {
  #state: "idle" | "open" | "done" = "idle";
  #tx: Tx | undefined;
  #committed: Promise<void> = Promise.resolve();
  #decide: (d: Decision) => void = () => undefined;
  readonly #decision = new Promise<Decision>((resolve) => (this.#decide = resolve));
  #savepoints = 0;
  readonly #opts: HoldOptions;

  constructor(opts: HoldOptions) {
    this.#opts = opts;
  }

  get holding(): boolean {
    return this.#state === "open" && this.#tx !== undefined;
  }
  get done(): boolean {
    return this.#state === "done";
  }

  run<T>(begin: Begin, work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#state === "open" && this.#tx !== undefined) return this.#join(this.#tx, work);
    this.#state = "open";
    return new Promise<T>((resolve, reject) => {
      let returned = false;
      this.#committed = begin(async (tx) => {
        await this.#opts.onOpen(tx);
        this.#tx = tx;
        resolve(await work(tx));
        returned = true;
        const decision = await this.#decision;
        if ("abort" in decision) throw new RolledBack();
        await decision.record(tx);
        if (this.#opts.commitDelayMs) await new Promise((r) => setTimeout(r, this.#opts.commitDelayMs));
      });
      this.#committed.catch((err: unknown) => {
        if (returned) return;
        // The work failed and rolled back: nothing is held; a later transact may open a new one.
        this.#state = "idle";
        this.#tx = undefined;
        reject(err);
      });
    });
  }

  async commit(record: (tx: Tx) => Promise<void>): Promise<void> {
    this.#state = "done";
    this.#decide({ record });
    await this.#committed;
  }

  async rollback(): Promise<void> {
    this.#state = "done";
    this.#decide({ abort: true });
    await this.#committed.catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
  }

  async #join<T>(tx: Tx, work: (tx: Tx) => Promise<T>): Promise<T> {
    const savepoint = `held_${++this.#savepoints}`;
    await tx.query(`savepoint ${savepoint}`);
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

const current = new AsyncLocalStorage<Held>();

/** A handle whose `within(fn)` runs the RPC so that the RPC's first read-write transaction is held for it. */
export function createHeldTransaction(
  opts: HoldOptions,
): HeldTransaction & { within<T>(fn: () => Promise<T>): Promise<T> } {
  const held = new Held(opts);
  return Object.assign(held, { within: <T>(fn: () => Promise<T>) => current.run(held, fn) });
}

/** For transact(): the held transaction of the running request, when there is one to open or join. */
export function heldTransactionOf(options: {
  readOnly?: boolean;
}): { run<T>(begin: Begin, work: (tx: Tx) => Promise<T>): Promise<T> } | undefined {
  const held = current.getStore();
  return held === undefined || held.done || options.readOnly === true ? undefined : held;
}
