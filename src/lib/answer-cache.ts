/**
 * A process-local cache of finished answers, bounded by bytes (least recently used first out). A service keys an
 * answer by everything it depends on, including a version of the data read from the database in the same request,
 * so an entry is never stale: a write that changes the answer changes its key. A cached answer is shared by every
 * caller that asks for it and must never be mutated.
 *
 * The faces keep their renderings of a cached answer (its JSON, compressed per coding) in the answer's `memo`, charged
 * to the same entry, so a repeated read costs a lookup and a write of stored bytes.
 */
export interface AnswerCache {
  /** The answer under `key`, or `compute()` stored under it (concurrent misses of one key share one computation). */
  get<T extends object>(key: string, compute: () => Promise<T>, sizeOf: (answer: T) => number): Promise<T>;
  /** Bytes held now (entries and their renderings). */
  readonly bytes: number;
}

/** Renderings of a cached answer by name (e.g. "identity", "zstd"), computed once each. */
export interface Memo {
  get(name: string, render: () => Promise<Buffer>): Promise<Buffer>;
}

const memoKey = Symbol("answer-memo");

/** The memo of an answer that came from an AnswerCache; undefined for any other answer. */
export function memoOf(answer: unknown): Memo | undefined {
  return typeof answer === "object" && answer !== null ? (answer as { [memoKey]?: Memo })[memoKey] : undefined;
}

interface Entry {
  answer: Promise<object>;
  size: number;
}

/** `maxBytes` 0 turns caching off (every get computes). */
export function createAnswerCache(maxBytes: number): AnswerCache {
  const entries = new Map<string, Entry>();
  let total = 0;

  const charge = (key: string, entry: Entry, bytes: number) => {
    // an entry evicted meanwhile is no longer counted
    if (entries.get(key) !== entry) return;
    entry.size += bytes;
    total += bytes;
    if (entry.size > maxBytes) drop(key, entry);
    for (const [k, e] of entries) {
      if (total <= maxBytes) break;
      drop(k, e);
    }
  };
  const drop = (key: string, entry: Entry) => {
    if (entries.get(key) !== entry) return;
    entries.delete(key);
    total -= entry.size;
  };

  return {
    get bytes() {
      return total;
    },
    get<T extends object>(key: string, compute: () => Promise<T>, sizeOf: (answer: T) => number): Promise<T> {
      if (maxBytes === 0) return compute();
      const hit = entries.get(key);
      if (hit !== undefined) {
        // most recently used last
        entries.delete(key);
        entries.set(key, hit);
        return hit.answer as Promise<T>;
      }
      const entry: Entry = { answer: undefined as unknown as Promise<object>, size: 0 };
      const renderings = new Map<string, Promise<Buffer>>();
      const memo: Memo = {
        get(name, render) {
          let r = renderings.get(name);
          if (r === undefined) {
            renderings.set(name, (r = render()));
            r.then(
              (b) => charge(key, entry, b.length),
              () => renderings.delete(name),
            );
          }
          return r;
        },
      };
      entry.answer = compute().then(
        (answer) => {
          Object.defineProperty(answer, memoKey, { value: memo });
          charge(key, entry, sizeOf(answer));
          return answer;
        },
        (err: unknown) => {
          drop(key, entry);
          throw err;
        },
      );
      entries.set(key, entry);
      return entry.answer as Promise<T>;
    },
  };
}
