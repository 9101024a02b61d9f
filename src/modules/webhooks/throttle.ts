/** An address's limits: deliveries started per second and requests in flight at once. */
export interface Limits {
  perSecond: number;
  concurrency: number;
}

export type Admission = { release: () => void } | { deferMs: number };

interface AddressState {
  /** Earliest start of the next request (monotonic ms): starts are spaced 1/perSecond apart. */
  nextStart: number;
  inFlight: number;
  waiting: (() => void)[];
  /** Admitted to wait for their start slot, not started yet. */
  queued: number;
  /** A receiver's Retry-After (monotonic ms): nothing starts before it. */
  pausedUntil: number;
}

/**
 * Per-address pacing inside one process: start times are spaced 1/perSecond apart (so no one-second window
 * holds more than perSecond + 1 starts) and at most `concurrency` requests are in flight. A delivery that would
 * wait longer than `maxWaitMs` is not admitted: the caller hands it back to the queue (`deferMs` later), so
 * waiting never holds a claim past its lease and is never counted as an attempt.
 */
export function createThrottle(now: () => number = () => performance.now()) {
  const states = new Map<string, AddressState>();
  const stateOf = (id: string): AddressState => {
    let s = states.get(id);
    if (s === undefined) states.set(id, (s = { nextStart: 0, inFlight: 0, waiting: [], queued: 0, pausedUntil: 0 }));
    return s;
  };
  const forget = (id: string, s: AddressState) => {
    if (s.inFlight === 0 && s.queued === 0 && s.waiting.length === 0 && s.nextStart < now() && s.pausedUntil < now()) states.delete(id);
  };

  return {
    async admit(id: string, limits: Limits, maxWaitMs: number): Promise<Admission> {
      const s = stateOf(id);
      const t = now();
      const start = Math.max(t, s.nextStart, s.pausedUntil);
      if (start - t > maxWaitMs) return { deferMs: Math.ceil(start - t) };
      s.nextStart = start + 1000 / limits.perSecond;
      s.queued++;
      if (start > t) await new Promise((r) => setTimeout(r, start - t));
      if (s.inFlight >= limits.concurrency) {
        const got = await new Promise<boolean>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
          const timer = setTimeout(() => {
            s.waiting.splice(s.waiting.indexOf(wake), 1);
            resolve(false);
          }, maxWaitMs);
          s.waiting.push(wake);
        });
        if (!got) {
          s.queued--;
          forget(id, s);
          return { deferMs: 1000 };
        }
      } else s.inFlight++;
      s.queued--;
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          const next = s.waiting.shift();
          // The slot passes straight to the next waiter (inFlight unchanged).
          if (next !== undefined) next();
          else s.inFlight--;
          forget(id, s);
        },
      };
    },
    /** A receiver asked for a pause (429/503 with Retry-After): nothing to it starts before then. */
    pause(id: string, ms: number): void {
      const s = stateOf(id);
      s.pausedUntil = Math.max(s.pausedUntil, now() + ms);
    },
    /** Deliveries admitted and still waiting for their start (the dispatcher tops an address up below a second's worth). */
    queued(id: string): number {
      return states.get(id)?.queued ?? 0;
    },
    pausedMs(id: string): number {
      return Math.max(0, (states.get(id)?.pausedUntil ?? 0) - now());
    },
  };
}
export type Throttle = ReturnType<typeof createThrottle>;
