import type pg from "pg";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { dueByAddress, nextDueAfter } from "./deliveries.repository.ts";
import type { Throttle } from "./throttle.ts";

export interface DispatcherDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  throttle: Throttle;
  /** Claims and makes the attempts of these deliveries (the engine's attempt). */
  attempt: (deliveryIds: readonly string[]) => Promise<unknown>;
  /** Longest sleep when nothing is known to be due (other processes' new work is seen within this). */
  pollMs: number;
}

/**
 * Starts due attempts on the wall clock: retries, deferred deliveries and recoveries. It sleeps until the
 * earliest `next_attempt_at` in the database (or `pollMs`), wakes early when this process schedules something,
 * and takes about a second's worth of each address at a time (its `max_per_second`), leaving an address alone
 * while that much of it still waits for the throttle. Claims are the engine's (skip locked + lease), so several
 * processes may dispatch at once; the every-minute sweeper stays the fallback.
 */
export function createDispatcher(d: DispatcherDeps) {
  let stopped = true;
  let sleeping: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  let wakeRequested = false;
  let loop: Promise<void> | undefined;
  const inFlight = new Set<string>();
  const running = new Set<Promise<unknown>>();

  function wake(): void {
    wakeRequested = true;
    if (sleeping !== undefined) {
      clearTimeout(sleeping.timer);
      sleeping.resolve();
    }
  }

  async function sleep(ms: number): Promise<void> {
    if (wakeRequested || ms <= 0) return;
    await new Promise<void>((resolve) => {
      sleeping = { timer: setTimeout(resolve, ms), resolve };
    });
    sleeping = undefined;
  }

  async function once(): Promise<number> {
    const now = d.clock.now();
    const rows = await dueByAddress(d.pool, now, [...inFlight]);
    const byAddress = new Map<string, string[]>();
    for (const r of rows) (byAddress.get(r.endpoint_id) ?? byAddress.set(r.endpoint_id, []).get(r.endpoint_id)!).push(r.id);
    for (const [endpointId, ids] of byAddress) {
      inFlight.add(endpointId);
      const work = d
        .attempt(ids)
        .catch((err: unknown) => d.logger.error({ err, endpointId }, "webhook dispatch failed"))
        .finally(() => {
          inFlight.delete(endpointId);
          running.delete(work);
          wake();
        });
      running.add(work);
    }
    const next = await nextDueAfter(d.pool, now);
    return next === undefined ? d.pollMs : Math.min(d.pollMs, Math.max(0, next.getTime() - d.clock.now().getTime()));
  }

  async function run(): Promise<void> {
    while (!stopped) {
      wakeRequested = false;
      let waitMs = d.pollMs;
      try {
        waitMs = await once();
      } catch (err) {
        if (!stopped) d.logger.error({ err }, "webhook dispatcher query failed");
      }
      // Debounce: a burst of wake-ups (many addresses finishing) costs one pass per 10 ms.
      await new Promise((r) => setTimeout(r, 10));
      await sleep(waitMs);
    }
  }

  return {
    wake,
    start(): void {
      if (!stopped) return;
      stopped = false;
      loop = run();
    },
    /** Stops planning; attempts under way finish (their results are recorded). */
    async stop(): Promise<void> {
      stopped = true;
      wake();
      await loop;
      await Promise.all([...running]);
    },
    /** Addresses this process is sending to right now (their next second's worth is not fetched yet). */
    inFlight: () => inFlight.size,
    throttle: d.throttle,
  };
}
export type Dispatcher = ReturnType<typeof createDispatcher>;
