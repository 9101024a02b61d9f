/** Delay before retry n (n = 1 is the wait after attempt 1): about 30 s, 2 min, 8 min, 32 min, 2 h, 8.5 h, 12 h. */
export const retryDelaysMs = [30_000, 120_000, 480_000, 1_920_000, 7_200_000, 30_600_000, 43_200_000] as const;
const maxAttempts = 8;
/** No attempt starts later than this after the first one. */
export const deliveryWindowMs = 24 * 60 * 60 * 1000;
/** Each delay is scaled by a factor drawn uniformly from [1 - jitter, 1 + jitter]. */
const jitter = 0.1;

/** Returns a number in [0, 1); injectable so tests can pin the jitter to its bounds. */
export type Random = () => number;

/**
 * When the next attempt of a delivery that just failed is due, or undefined when it has failed for good
 * (8 attempts made, or the next attempt would start more than 24 h after the first one). `delaysMs` is the
 * production schedule unless a test configures a short one (the attempt cap is its length + 1).
 */
export function nextAttemptAt(input: {
  attemptsMade: number;
  firstAttemptAt: Date;
  now: Date;
  random: Random;
  delaysMs?: readonly number[];
}): Date | undefined {
  const delays = input.delaysMs ?? retryDelaysMs;
  if (input.attemptsMade >= Math.min(maxAttempts, delays.length + 1)) return undefined;
  const base = delays[input.attemptsMade - 1];
  if (base === undefined) return undefined;
  const factor = 1 - jitter + 2 * jitter * input.random();
  const next = new Date(input.now.getTime() + Math.round(base * factor));
  if (next.getTime() - input.firstAttemptAt.getTime() > deliveryWindowMs) return undefined;
  return next;
}
