import { throwIfDeadlinePassed } from "./deadline.ts";

/**
 * Runs at most `max` works at once; the others wait in line, first come first served. A work that fails frees its
 * place like one that succeeds.
 */
export function concurrencyLimit(max: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    // a finished work hands its place to the first in line (running stays the same)
    if (running < max) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      // a call whose deadline passed while it waited in line gives its place on without starting (deadline.ts)
      throwIfDeadlinePassed();
      return await work();
    } finally {
      const next = waiting.shift();
      if (next === undefined) running--;
      else next();
    }
  };
}

/**
 * Runs works of different keys at once (at most `max` at a time, as concurrencyLimit) and works of one key one after
 * another, in the order they came. A work asked for while an earlier work of its key has not started yet joins that
 * one instead of queuing a second: both callers get its result. That is right for works that do "everything due for
 * this key" (drain a key's queued rows), since the joined work starts after the caller asked.
 */
export function keyedSerializer(max: number): (key: string, work: () => Promise<void>) => Promise<void> {
  const limit = concurrencyLimit(max);
  const keys = new Map<string, { tail: Promise<void>; waiting: Promise<void> | undefined }>();
  return (key, work) => {
    let state = keys.get(key);
    if (state === undefined) {
      state = { tail: Promise.resolve(), waiting: undefined };
      keys.set(key, state);
    }
    const s = state;
    if (s.waiting !== undefined) return s.waiting;
    const mine: Promise<void> = s.tail
      .catch(() => undefined)
      .then(() =>
        limit(() => {
          // started: a later caller of this key queues behind this work instead of joining it
          if (s.waiting === mine) s.waiting = undefined;
          return work();
        }),
      );
    s.waiting = mine;
    s.tail = mine;
    void mine
      .catch(() => undefined)
      .then(() => {
        if (s.tail === mine) keys.delete(key);
      });
    return mine;
  };
}
