import type pg from "pg";
import type { EventStreamLimits } from "../../config.ts";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../lib/logger.ts";
import { eventsAfter, isAfter, streamHead, type Position, type StreamedEvent } from "./stream.repository.ts";

const PAGE = 500;
/** How soon a feed reads again when rows wait for an older transaction to finish. */
const HELD_RETRY_MS = 100;

type StreamItem = { event: StreamedEvent } | { keepAlive: Position };

interface StreamRequest {
  propertyId: string;
  /** The user or client: its open streams are counted. */
  caller: string;
  /** After this position; "now": only events committed from now on. */
  after: Position | "now";
  /** Only these types; undefined = all. */
  types: ReadonlySet<string> | undefined;
  signal: AbortSignal;
}

export interface EventStreamHub {
  /** A property's events after a position: the backlog from the database, then the feed's live ones. */
  stream(req: StreamRequest): AsyncGenerator<StreamItem>;
  /** A transaction that recorded events of the property committed (a NOTIFY). */
  wake(propertyId: string): void;
  /** Notifications may have been missed (the LISTEN session came back): every feed reads again. */
  wakeAll(): void;
  /** Ends every open stream (at shutdown, so none holds the grace period); later calls are refused. */
  close(): void;
}

interface Subscriber {
  queue: StreamedEvent[];
  failed?: AppError;
  signal(): void;
}

/**
 * One feed per property with subscribers in this process: on each wake-up it reads the new events once and hands
 * them to every subscriber's bounded queue, so N subscribers cost one query per commit, not N. A subscriber
 * whose queue overflows (it reads too slowly) is cut off with `reader_too_slow` and resumes by cursor.
 */
class Feed {
  readonly subscribers = new Set<Subscriber>();
  dropped = false;
  private reading = false;
  private again = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly poll: NodeJS.Timeout;

  private readonly pool: pg.Pool;
  private readonly propertyId: string;
  position: Position;
  private readonly limits: EventStreamLimits;
  private readonly logger: Logger;

  constructor(pool: pg.Pool, propertyId: string, position: Position, limits: EventStreamLimits, logger: Logger) {
    this.pool = pool;
    this.propertyId = propertyId;
    this.position = position;
    this.limits = limits;
    this.logger = logger;
    // a notification lost while the LISTEN session was down is caught up with at the keep-alive pace
    this.poll = setInterval(() => this.wake(), limits.keepAliveMs);
    this.poll.unref();
  }

  wake(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.read().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  stop(): void {
    clearTimeout(this.retry);
    clearInterval(this.poll);
  }

  private async read(): Promise<void> {
    try {
      for (;;) {
        const { events, held, full } = await eventsAfter(this.pool, this.propertyId, this.position, PAGE);
        for (const e of events) for (const s of this.subscribers) this.offer(s, e);
        if (events.length > 0) this.position = events[events.length - 1]!.position;
        if (held) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => this.wake(), HELD_RETRY_MS);
          this.retry.unref();
        }
        if (!full) return;
      }
    } catch (err) {
      // the next notification or keep-alive reads again from the same position
      this.logger.warn({ err, propertyId: this.propertyId }, "event stream feed read failed");
    }
  }

  private offer(s: Subscriber, e: StreamedEvent): void {
    if (s.failed !== undefined) return;
    if (s.queue.length >= this.limits.bufferEvents) {
      s.queue.length = 0;
      s.failed = new AppError(
        "reader_too_slow",
        `The stream was ended: more than ${this.limits.bufferEvents} events waited for this reader. Resume from the last cursor received.`,
      );
      this.subscribers.delete(s);
    } else s.queue.push(e);
    s.signal();
  }
}

/** The event stream of this process (one per app; fed by one LISTEN session, see events/index.ts). */
export function createEventStreamHub(pool: pg.Pool, limits: EventStreamLimits, logger: Logger): EventStreamHub {
  const feeds = new Map<string, Promise<Feed>>();
  const open = new Map<string, number>();
  const closing = new AbortController();

  function feedOf(propertyId: string): Promise<Feed> {
    let feed = feeds.get(propertyId);
    if (feed === undefined) {
      feed = streamHead(pool, propertyId).then((p) => new Feed(pool, propertyId, p, limits, logger));
      feeds.set(propertyId, feed);
      feed.catch(() => feeds.delete(propertyId));
    }
    return feed;
  }

  /** Adds the subscriber to the property's feed (made on first use), never to one being dropped. */
  async function join(propertyId: string, s: Subscriber): Promise<Feed> {
    for (;;) {
      const pending = feedOf(propertyId);
      const feed = await pending;
      if (feeds.get(propertyId) === pending) {
        feed.subscribers.add(s);
        return feed;
      }
    }
  }

  function leave(propertyId: string, feed: Feed, s: Subscriber): void {
    feed.subscribers.delete(s);
    // the map's entry is this feed until it is dropped (a feed is made only when there is none)
    if (feed.subscribers.size === 0 && !feed.dropped) {
      feed.dropped = true;
      feed.stop();
      feeds.delete(propertyId);
    }
  }

  /** Resolves on a new event, a failure, the keep-alive time, the end of the stream or the caller's going away. */
  function wait(s: Subscriber, ms: number, signals: AbortSignal[]): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const aborts = signals.map((sig) => {
        sig.addEventListener("abort", done, { once: true });
        return sig;
      });
      s.signal = done;
      function done(): void {
        clearTimeout(timer);
        for (const sig of aborts) sig.removeEventListener("abort", done);
        s.signal = () => undefined;
        resolve();
      }
    });
  }

  async function* stream(req: StreamRequest): AsyncGenerator<StreamItem> {
    if (closing.signal.aborted) throw new AppError("unavailable", "The server is shutting down; reconnect.");
    const count = open.get(req.caller) ?? 0;
    if (count >= limits.maxPerCaller)
      throw new AppError("rate_limited", `At most ${limits.maxPerCaller} event streams may be open per caller.`);
    open.set(req.caller, count + 1);
    const ends = AbortSignal.any([req.signal, closing.signal, AbortSignal.timeout(limits.maxDurationMs)]);
    const s: Subscriber = { queue: [], signal: () => undefined };
    let feed: Feed | undefined;
    try {
      const wanted = (e: StreamedEvent): boolean => req.types === undefined || req.types.has(e.type);
      let position = req.after === "now" ? undefined : req.after;
      // The backlog page by page; then the subscriber joins the feed and reads once more, so whatever the feed
      // hands over afterwards follows on from what was read (what both carry is skipped below).
      for (let phase = position === undefined ? 1 : 0; phase < 2; phase++) {
        if (phase === 1) {
          feed = await join(req.propertyId, s);
          position ??= feed.position;
          // rows the feed has not read yet (it may have been made after their notification): read them now
          feed.wake();
        }
        for (let full = true; full && !ends.aborted;) {
          const page = await eventsAfter(pool, req.propertyId, position!, PAGE);
          full = page.full;
          for (const e of page.events) {
            if (ends.aborted) return;
            position = e.position;
            if (wanted(e)) yield { event: e };
          }
        }
      }
      if (position === undefined) return;
      // Live: what the feed hands over, with a keep-alive when nothing came for a while.
      let quietSince = Date.now();
      while (!ends.aborted) {
        if (s.failed !== undefined) throw s.failed;
        const next = s.queue.shift();
        if (next !== undefined) {
          if (!isAfter(next.position, position)) continue;
          position = next.position;
          if (wanted(next)) {
            quietSince = Date.now();
            yield { event: next };
          }
          continue;
        }
        const left = limits.keepAliveMs - (Date.now() - quietSince);
        if (left <= 0) {
          quietSince = Date.now();
          yield { keepAlive: position };
          continue;
        }
        await wait(s, left, [ends]);
      }
    } finally {
      if (feed !== undefined) leave(req.propertyId, feed, s);
      const left = (open.get(req.caller) ?? 1) - 1;
      if (left <= 0) open.delete(req.caller);
      else open.set(req.caller, left);
    }
  }

  return {
    stream,
    wake(propertyId) {
      void feeds.get(propertyId)?.then(
        (f) => f.wake(),
        () => undefined,
      );
    },
    wakeAll() {
      for (const f of feeds.values())
        void f.then(
          (feed) => feed.wake(),
          () => undefined,
        );
    },
    close() {
      closing.abort();
    },
  };
}
