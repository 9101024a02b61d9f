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
