import type pg from "pg";
import { newId } from "../../lib/ids.ts";
import { runQuery, type Statement } from "../../db/queryable.ts";

/** An address's limits: deliveries started per second and requests in flight at once. */
interface Limits {
  perSecond: number;
  concurrency: number;
}

/** What a batch asks of one address: `wanted` starts. */
export interface PaceRequest extends Limits {
  endpointId: string;
  wanted: number;
}

/** What it got: start times (performance.now() of this process) for the first `startsAt.length`, and permits. */
export interface Grant {
  startsAt: number[];
  /** Requests of the batch that may be in flight at once (held in the database until released). */
  permits: number;
  /** The rest (not granted) is handed back to the queue, due this much later. */
  deferMs: number;
}

/**
 * Per-address pacing shared by every process, reserved in the database (`webhook_pacing`): a batch reserves,
 * in one statement for all its addresses, consecutive start slots 1/maxPerSecond apart after the address's
 * last reserved slot (never more than `horizonMs` ahead: the rest goes back to the queue, so no slot is
 * reserved for a delivery that will not use it soon) and concurrency permits (`holds`, each expiring with the
 * claim's lease so a dead process frees them). Offsets are computed from the database's clock in the same
 * statement, so the processes' clocks do not matter. A receiver's Retry-After pauses the address for all.
 */
interface ReserveRow {
  endpoint_id: string;
  now_ms: number;
  first_ms: number;
  granted: number;
  permits: number;
  free: number;
  interval_ms: number;
  next_ms: number;
}

/**
 * One statement for a batch's addresses: each address row locked (in id order), its live holds (`<expiry ms>|<batch>`),
 * the first free start slot (after the last reserved one, a pause and now), as many slots as the horizon allows,
 * and permits up to the concurrency left. A hold expires with the claim's lease (a dead process frees them).
 */
const releaseSql: Statement = {
  name: "webhooks_pacing_release",
  text: `update webhook_pacing set holds = array(select h from unnest(holds) h where split_part(h, '|', 2) <> $2)
         where endpoint_id = $1`,
};

const reserveSql: Statement = {
  name: "webhooks_pacing_reserve",
  text: `with req as (
    select u.endpoint_id, u.wanted, 1000.0 / u.per_second as interval_ms, u.concurrency, clock_timestamp() as now
    from unnest($1::uuid[], $2::int[], $3::int[], $4::int[]) as u(endpoint_id, wanted, per_second, concurrency)
  ), cur as (
    select r.*, p.next_start_at, p.paused_until,
      array(select h from unnest(p.holds) h where split_part(h, '|', 1)::float8 > extract(epoch from r.now) * 1000) as live
    from req r join webhook_pacing p on p.endpoint_id = r.endpoint_id
    order by r.endpoint_id
    for update of p
  ), plan as (
    select c.*, greatest(c.next_start_at, c.now, coalesce(c.paused_until, c.now)) as start0,
      greatest(0, c.concurrency - cardinality(c.live)) as free
    from cur c
  ), granted as (
    select p.*, case when p.free = 0 then 0 else least(p.wanted, greatest(0,
        floor((extract(epoch from (p.now - p.start0)) * 1000 + $5::float8) / p.interval_ms)::int + 1)) end as n
    from plan p
  ), upd as (
    update webhook_pacing w set
      next_start_at = case when g.n > 0 then g.start0 + g.n * g.interval_ms * interval '1 millisecond' else w.next_start_at end,
      holds = g.live || array_fill(((extract(epoch from g.now) * 1000 + $6::float8)::bigint)::text || '|' || $7::text, array[least(g.n, g.free)])
    from granted g where w.endpoint_id = g.endpoint_id
  )
  select endpoint_id, extract(epoch from now) * 1000 as now_ms, extract(epoch from (start0 - now)) * 1000 as first_ms, n as granted, least(n, free) as permits, free,
    interval_ms, extract(epoch from (start0 + n * interval_ms * interval '1 millisecond' - now)) * 1000 as next_ms
  from granted`,
};

/** Longest wait for a free permit of an address before its deliveries go back to the queue. */
export const maxPermitWaitMs = 2_000;

/**
 * How late past its slot a request that waited for a permit may still start (half its interval, at least this):
 * later, it would crowd the slots after it (another batch's or process's), so it goes back to the queue.
 */
export const minSlackMs = 10;

/** Where an attempt of a batch starts (ms, performance.now()) and the address's permits it runs under (engine side). */
export interface Slot {
  startAt: number;
  /** Later than this the slot is missed (it would bunch with the next ones): the delivery goes back to the queue. */
  latestAt: number;
  gate: Gate;
}

/** The concurrency permits a batch holds for one address, shared by its requests to it. */
export interface Gate {
  acquire(): Promise<void>;
  release(): void;
}

export function createGate(permits: number): Gate {
  let free = permits;
  const waiting: (() => void)[] = [];
  return {
    acquire: () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((r) => waiting.push(r))),
    release: () => {
      const next = waiting.shift();
      if (next !== undefined) next();
      else free++;
    },
  };
}

/** No permit free: the delivery is looked at again this much later. */
const noPermitMs = 100;

export function createPacing(pool: pg.Pool, opts: { horizonMs: number; holdMs: number }) {
  /** Retry-After pauses seen by this process (checked again right before a start). */
  const paused = new Map<string, number>();
  /** This process's last maxPerSecond start times per address (a ring), and when it last started one. */
  const windows = new Map<string, { starts: Float64Array; next: number; last: number }>();
  /**
   * The database clock minus this process's performance clock, estimated like NTP from the statement's round
   * trip (the database read its clock between sending and answering): the estimate with the shortest round
   * trip is kept (its error is at most half of it), renewed every 30 s.
   */
  let clockOffset: { rtt: number; offset: number; at: number } | undefined;
  function offsetOf(sent: number, answered: number, dbMs: number): number {
    const rtt = answered - sent;
    if (clockOffset === undefined || rtt <= clockOffset.rtt || answered - clockOffset.at > 30_000)
      clockOffset = { rtt, offset: dbMs - (sent + answered) / 2, at: answered };
    return clockOffset.offset;
  }

  async function reserveOnce(requests: readonly PaceRequest[], token: string): Promise<Map<string, Grant>> {
    const params = [
      requests.map((r) => r.endpointId),
      requests.map((r) => r.wanted),
      requests.map((r) => r.perSecond),
      requests.map((r) => r.concurrency),
      opts.horizonMs,
      opts.holdMs,
      token,
    ];
    let sent = performance.now();
    let { rows } = await runQuery<ReserveRow>(pool, reserveSql, params);
    if (rows.length < requests.length) {
      // An address's first batch: its row is made here, once (the reservation locks existing rows only).
      await pool.query(
        // (an address deleted meanwhile gets none: its deliveries are handed back and then cancelled)
        "insert into webhook_pacing (endpoint_id, next_start_at) select ep.id, '-infinity' from webhook_endpoints ep where ep.id = any($1::uuid[]) on conflict (endpoint_id) do nothing",
        [requests.map((r) => r.endpointId)],
      );
      sent = performance.now();
      ({ rows } = await runQuery<ReserveRow>(pool, reserveSql, params));
    }
    const answered = performance.now();
    const grants = new Map<string, Grant>();
    for (const r of rows) {
      // The slot on the database's timeline, placed on this process's clock (all processes share that timeline).
      const first = Number(r.now_ms) + Number(r.first_ms) - offsetOf(sent, answered, Number(r.now_ms));
      const interval = Number(r.interval_ms);
      grants.set(r.endpoint_id, {
        startsAt: Array.from({ length: r.granted }, (_, i) => first + i * interval),
        permits: r.permits,
        // Not granted: a start slot beyond the horizon (due when the horizon reaches it), or no permit free
        // (another batch's requests are in flight: look again shortly).
        deferMs:
          r.free === 0 ? noPermitMs : Math.max(noPermitMs + 1, Math.round(Number(r.next_ms) - opts.horizonMs / 2)),
      });
    }
    return grants;
  }

  return {
    /**
     * Start slots and permits for a batch's addresses. An address whose permits are all held (by other batches
     * or processes) is asked again every 25 ms for up to `waitMs`, as its requests end, before giving up.
     */
    async reserve(
      requests: readonly PaceRequest[],
      waitMs: number,
    ): Promise<{ grants: Map<string, Grant>; token: string }> {
      const token = newId();
      const grants = new Map<string, Grant>();
      const deadline = performance.now() + waitMs;
      let asking = requests;
      for (;;) {
        for (const [id, grant] of await reserveOnce(asking, token)) grants.set(id, grant);
        asking = asking.filter(
          (r) => grants.get(r.endpointId)?.startsAt.length === 0 && grants.get(r.endpointId)?.deferMs === noPermitMs,
        );
        if (asking.length === 0 || performance.now() + 25 > deadline) return { grants, token };
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    /**
     * The last word before a request starts: no one-second window of this process holds more than maxPerSecond
     * starts, whatever its timers did (a stalled event loop releases its due starts late, not all at once).
     */
    async admitStart(endpointId: string, perSecond: number): Promise<void> {
      for (;;) {
        let w = windows.get(endpointId);
        if (w === undefined || w.starts.length !== perSecond)
          windows.set(endpointId, (w = { starts: new Float64Array(perSecond).fill(-Infinity), next: 0, last: 0 }));
        const t = performance.now();
        const oldest = w.starts[w.next]!;
        if (t - oldest >= 1000) {
          w.starts[w.next] = t;
          w.next = (w.next + 1) % perSecond;
          w.last = t;
          if (windows.size > 1000) for (const [id, x] of windows) if (t - x.last > 5_000) windows.delete(id);
          return;
        }
        await new Promise((r) => setTimeout(r, oldest + 1000 - t));
      }
    },
    /** Gives an address's permits of a batch back (its requests ended). */
    async release(endpointId: string, token: string): Promise<void> {
      await runQuery(pool, releaseSql, [endpointId, token]);
    },
    /** A receiver asked for a pause (429/503 with Retry-After): nothing to it starts before then, from any process. */
    async pause(endpointId: string, ms: number): Promise<void> {
      paused.set(endpointId, Math.max(paused.get(endpointId) ?? 0, performance.now() + ms));
      await pool.query(
        `insert into webhook_pacing (endpoint_id, next_start_at, paused_until)
         select ep.id, '-infinity', clock_timestamp() + $2::float8 * interval '1 millisecond' from webhook_endpoints ep where ep.id = $1
         on conflict (endpoint_id) do update set paused_until = greatest(webhook_pacing.paused_until, excluded.paused_until)`,
        [endpointId, ms],
      );
    },
    /** How long this process knows the address to be paused (0: not paused). */
    pausedMs(endpointId: string): number {
      const until = paused.get(endpointId);
      if (until === undefined) return 0;
      const left = until - performance.now();
      if (left <= 0) paused.delete(endpointId);
      return Math.max(0, left);
    },
  };
}
export type Pacing = ReturnType<typeof createPacing>;
