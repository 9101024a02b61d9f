import type pg from "pg";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { dueByAddress, nextDueAfter } from "./deliveries.repository.ts";

export interface DispatcherDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  /** Claims and makes the attempts of these deliveries (the engine's attempt). */
  attempt: (deliveryIds: readonly string[]) => Promise<unknown>;
  /** Longest sleep when nothing is known to be due (other processes' new work is seen within this). */
  pollMs: number;
}

/**
 * Starts due attempts on the wall clock: retries, deferred deliveries and recoveries. It sleeps until the
 * earliest `next_attempt_at` in the database (or `pollMs`), wakes early when this process schedules something,
 * and takes about a second's worth of each address at a time (its `max_per_second`), the next one shortly
 * before the previous one's start slots run out. Claims are the engine's (skip locked + lease), so several
 * processes may dispatch at once; the every-minute sweeper stays the fallback.
 */
export function createDeliveryDispatcher(d: DispatcherDeps) {
  let stopped = true;
  let sleeping: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  let wakeRequested = false;
  let loop: Promise<void> | undefined;
  /** Batches under way per address, and until when (ms) the address's last batch still fills its start slots. */
  const batches = new Map<string, number>();
  const fedUntil = new Map<string, number>();
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

  /**
   * An address is topped up with its next second's worth shortly before the previous batch's start slots run
   * out (so it keeps its rate without gaps), with at most two batches of it under way.
   */
  function busy(endpointId: string, t: number): boolean {
    return (batches.get(endpointId) ?? 0) >= 2 || (fedUntil.get(endpointId) ?? 0) > t;
  }

  async function once(): Promise<number> {
    const now = d.clock.now();
    const t = performance.now();
    const skip = [...batches.keys()].filter((id) => busy(id, t));
    const rows = await dueByAddress(d.pool, now, skip);
    const byAddress = new Map<string, { ids: string[]; perSecond: number }>();
    for (const r of rows) {
      let group = byAddress.get(r.endpoint_id);
      if (group === undefined) byAddress.set(r.endpoint_id, (group = { ids: [], perSecond: r.max_per_second }));
      group.ids.push(r.id);
    }
    for (const [endpointId, group] of byAddress) {
      batches.set(endpointId, (batches.get(endpointId) ?? 0) + 1);
      fedUntil.set(endpointId, performance.now() + Math.max(0, (group.ids.length / group.perSecond) * 1000 - 250));
      const work = d
        .attempt(group.ids)
        .catch((err: unknown) => d.logger.error({ err, endpointId }, "webhook dispatch failed"))
        .finally(() => {
          const left = (batches.get(endpointId) ?? 1) - 1;
          if (left === 0) {
            batches.delete(endpointId);
            fedUntil.delete(endpointId);
          } else batches.set(endpointId, left);
          running.delete(work);
          wake();
        });
      running.add(work);
    }
    const next = await nextDueAfter(d.pool, now);
    let waitMs =
      next === undefined ? d.pollMs : Math.min(d.pollMs, Math.max(0, next.getTime() - d.clock.now().getTime()));
    // Wake when an address with work under way may be topped up.
    for (const [endpointId, until] of fedUntil)
      if ((batches.get(endpointId) ?? 0) < 2) waitMs = Math.min(waitMs, Math.max(0, until - performance.now()));
    return waitMs;
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
    /** Addresses this process is sending to right now. */
    inFlight: () => batches.size,
  };
}
