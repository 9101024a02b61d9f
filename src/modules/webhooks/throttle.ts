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
  /** Starts go one after another: each waits for the previous one and the spacing since its actual start. */
  turn: Promise<void>;
  lastStart: number;
}

/**
 * Per-address pacing inside one process: starts are spaced at least 1/perSecond apart, measured between the
 * actual starts (so no one-second window holds more than perSecond + 1 starts) and at most `concurrency`
 * requests are in flight. A delivery that would
 * wait longer than `maxWaitMs` is not admitted: the caller hands it back to the queue (`deferMs` later), so
 * waiting never holds a claim past its lease and is never counted as an attempt.
 */
export function createThrottle(now: () => number = () => performance.now()) {
  const states = new Map<string, AddressState>();
  const stateOf = (id: string): AddressState => {
    let s = states.get(id);
    if (s === undefined)
      states.set(
        id,
        (s = {
          nextStart: 0,
          inFlight: 0,
          waiting: [],
          queued: 0,
          pausedUntil: 0,
          turn: Promise.resolve(),
          lastStart: -Infinity,
        }),
      );
    return s;
  };
  const forget = (id: string, s: AddressState) => {
    if (
      s.inFlight === 0 &&
      s.queued === 0 &&
      s.waiting.length === 0 &&
      s.nextStart < now() &&
      s.pausedUntil < now() &&
      now() - s.lastStart > 1000
    )
      states.delete(id);
  };

  return {
    async admit(id: string, limits: Limits, maxWaitMs: number): Promise<Admission> {
      const s = stateOf(id);
      const t = now();
      const start = Math.max(t, s.nextStart, s.pausedUntil);
      if (start - t > maxWaitMs) return { deferMs: Math.ceil(start - t) };
      const interval = 1000 / limits.perSecond;
      s.nextStart = start + interval;
      s.queued++;
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
      // Holding a request slot, wait for the turn: spacing is measured between actual starts, so timers that
      // fire late (a busy event loop) slow the address down instead of releasing a burst.
      const mine = s.turn.then(async () => {
        for (;;) {
          // A pause asked for meanwhile (Retry-After) longer than we may wait: hand the delivery back.
          if (s.pausedUntil - now() > maxWaitMs) return false;
          const wait = Math.max(s.lastStart + interval, s.pausedUntil) - now();
          if (wait <= 0) break;
          await new Promise((r) => setTimeout(r, wait));
        }
        s.lastStart = now();
        return true;
      });
      s.turn = mine.then(() => undefined);
      const started = await mine;
      s.queued--;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const next = s.waiting.shift();
        // The slot passes straight to the next waiter (inFlight unchanged).
        if (next !== undefined) next();
        else s.inFlight--;
        forget(id, s);
      };
      if (!started) {
        release();
        return { deferMs: Math.max(1000, Math.ceil(s.pausedUntil - now())) };
      }
      return { release };
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
