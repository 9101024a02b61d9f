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

/**
 * An answer's list field from a LazyList: the list itself when the REST gateway calls (protocolName "rest": its JSON
 * writer, src/gateway/codec-text.ts, builds the parts as it writes them), else the whole list (Connect and gRPC encode
 * a message in one piece). The LazyList is typed as the array it stands for; only that writer reads such a field.
 */
export function answerList<T>(ctx: { protocolName: string }, list: LazyList<T>): T[] {
  return ctx.protocolName === "rest" ? (list as unknown as T[]) : list.toArray();
}
