/**
 * A long list built part by part as it is read: an answer too large to hold as objects (the ARI grid of a hotel's
 * year) keeps compact data and builds one part's objects at a time while the REST face writes it, so they die young
 * instead of the whole grid being alive at once. Consumers that need the whole list (a protobuf message encoded in
 * one piece) take toArray(). Each reading of parts() builds them anew.
 */
export class LazyList<T> {
  readonly parts: () => Iterable<readonly T[]>;

  constructor(parts: () => Iterable<readonly T[]>) {
    this.parts = parts;
  }

  map<U>(f: (item: T) => U): LazyList<U> {
    const parts = this.parts;
    return new LazyList(function* () {
      for (const part of parts()) yield part.map(f);
    });
  }

  toArray(): T[] {
    const all: T[] = [];
    for (const part of this.parts()) for (const item of part) all.push(item);
    return all;
  }
}

/** The lists answerList handed out in place of a LazyList, with the LazyList each stands for. */
const standIns = new WeakMap<readonly unknown[], LazyList<unknown>>();

/**
 * An answer's list field from a LazyList. Connect and gRPC encode a message in one piece: the whole list. The REST
 * gateway's JSON writer (src/gateway/codec-text.ts) builds the parts as it writes them: for it the field is a frozen,
 * empty array that stands for the LazyList (`lazyListOf` finds it). The field is a real array either way; only that
 * writer knows where the items of a stand-in are.
 */
export function answerList<T>(ctx: { protocolName: string }, list: LazyList<T>): T[] {
  if (ctx.protocolName !== "rest") return list.toArray();
  const standIn: T[] = [];
  Object.freeze(standIn);
  standIns.set(standIn, list);
  return standIn;
}

/** The LazyList an array from answerList stands for; undefined for any other array. */
export function lazyListOf(list: readonly unknown[]): LazyList<unknown> | undefined {
  return standIns.get(list);
}
