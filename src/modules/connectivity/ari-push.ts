import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { findClient } from "../auth/index.ts";
import { recordPartnerEvents, type NewPartnerEvent } from "../events/index.ts";
import { ariChangesAfter, ariHeads, type AriChangeRow, type InventoryService } from "../inventory/index.ts";
import { encodeCursor } from "./connectivity.service.ts";
import { mappingsOf, ratePlansOf, roomTypesOf } from "./reads.repository.ts";

/** Cells (room type x rate plan x day) in one ari.updated message at most; a larger push is split in order. */
export const ariPushCellsPerMessage = 500;
/** Changes of one property within this window become one push. */
const ariPushWindowMs = 1_000;
/** Feed rows one push takes at most (the rest goes in the next push, numbered after it). */
const changesPerPush = 5_000;
/** A property first heard of (no cursor yet) is pushed from its changes of this last span only. */
const firstPushLookbackMs = 60_000;
const DAY_MS = 86_400_000;
/**
 * Pushes made at once by one process. A push mostly waits on the database (the feed, the grid read, the cursor's
 * transaction), so lanes beyond the pool's connections still overlap their round trips; the others wait for the
 * next tick.
 */
const pushLanes = 16;
const readDays = 366;

export interface AriPushOptions {
  /** Coalescing window (default 1 s). */
  windowMs?: number;
  /** How often the pusher looks for new changes (default 100 ms). */
  tickMs?: number;
  cellsPerMessage?: number;
}

/** Who listens: partner clients with an open `ari.updated` callback covering each property (and granted it). */
export type AriListeners = (propertyIds: readonly string[]) => Promise<Map<string, string[]>>;

export interface AriCell {
  roomTypeCode: string;
  ratePlanCode: string;
  date: string;
  available: number;
  priceMinor: string | null;
  /** A rate plan that prices by occupancy: the price per number of adults (absent for other plans). */
  occupancyPrices?: { adults: number; priceMinor: string }[];
  minStay: number | null;
  maxStay: number | null;
  closedToArrival: boolean;
  closedToDeparture: boolean;
  stopSell: boolean;
}

const cellKey = (c: AriCell) => `${c.roomTypeCode}\u0000${c.ratePlanCode}\u0000${c.date}`;
const addDays = (date: string, n: number) => new Date(Date.parse(date) + n * DAY_MS).toISOString().slice(0, 10);

/**
 * The ARI push: the ARI delta feed (ari_changes, numbered per property in commit order) turned into `ari.updated`
 * partner events carrying the new values in each listening client's codes. Changes of a property are coalesced
 * for `windowMs` after the first one is seen, then everything up to the feed's head becomes one push numbered
 * with that head (`seq`), split into messages of at most `cellsPerMessage` cells in (room type, rate plan, date)
 * order. The values are read after the changes, so they are at least as new as `seq`; a partner that misses a
 * push resumes from the pull feed with the push's `cursor`. One process pushes a property at a time (a
 * transaction lock and a compare-and-set of the cursor).
 */
export function createAriPusher(d: {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
  logger: Logger;
  inventory: InventoryService;
  listeners: AriListeners;
  options?: AriPushOptions;
}) {
  const windowMs = d.options?.windowMs ?? ariPushWindowMs;
  const tickMs = d.options?.tickMs ?? 100;
  const cellsPerMessage = d.options?.cellsPerMessage ?? ariPushCellsPerMessage;
  const q = poolQueryable(d.pool);
  /** When this process first saw unpushed changes of a property (performance.now()). */
  const seen = new Map<string, number>();
  /** Properties being pushed by this process now. */
  const busy = new Set<string>();
  let inFlight: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /** Looks for properties whose window has passed and starts their pushes; returns them. */
  async function scan(): Promise<Promise<number>[]> {
    const [heads, cursors] = await Promise.all([
      ariHeads(q),
      q.query<{ property_id: string; seq: string }>("select property_id, seq::text as seq from ari_push_cursors"),
    ]);
    const pushed = new Map(cursors.map((c) => [c.property_id, BigInt(c.seq)]));
    const pending = [...heads].filter(([id, head]) => head > (pushed.get(id) ?? -1n)).map(([id]) => id);
    if (pending.length === 0) return [];
    const listening = await d.listeners(pending);
    // Nobody listens: the cursor follows the head, so a callback added later starts from then, not from history.
    const silent = pending.filter((id) => !listening.has(id));
    if (silent.length > 0) {
      await d.pool.query(
        `insert into ari_push_cursors (property_id, seq, pushed_at) select * from unnest($1::uuid[], $2::bigint[], $3::timestamptz[])
         on conflict (property_id) do update set seq = greatest(ari_push_cursors.seq, excluded.seq), pushed_at = excluded.pushed_at`,
        [silent, silent.map((id) => heads.get(id)!.toString()), silent.map(() => d.clock.now())],
      );
      for (const id of silent) seen.delete(id);
    }
    const now = performance.now();
    const started: Promise<number>[] = [];
    for (const [propertyId, clients] of listening) {
      if (busy.has(propertyId)) continue;
      const first = seen.get(propertyId);
      if (first === undefined) {
        seen.set(propertyId, now);
        if (windowMs > 0) continue;
      } else if (now - first < windowMs) continue;
      // A few pushes at a time per process; the others wait for the next tick (their window has passed).
      if (busy.size >= pushLanes) break;
      seen.delete(propertyId);
      busy.add(propertyId);
      started.push(
        push(propertyId, pushed.get(propertyId), clients)
          .catch((err: unknown) => {
            d.logger.error({ err, propertyId }, "ARI push failed; retried at a later tick");
            return 0;
          })
          .finally(() => busy.delete(propertyId)),
      );
    }
    // The loop does not wait for the pushes (a slow one does not hold back the next properties' windows); a pass by
    // hand (tick) does.
    inFlight = Promise.all([inFlight, ...started]).then(() => undefined);
    return started;
  }

  /** One push of the property's changes after `cursor` to each client. Returns 1 if it pushed, else 0. */
  async function push(propertyId: string, cursor: bigint | undefined, clientIds: string[]): Promise<number> {
    const after = cursor ?? 0n;
    const since = cursor === undefined ? new Date(d.clock.now().getTime() - firstPushLookbackMs) : undefined;
    const changes = await ariChangesAfter(q, propertyId, after, since, changesPerPush);
    const last = changes.at(-1);
    if (last === undefined) {
      if (cursor === undefined) await advance(propertyId, undefined, (await ariHeads(q)).get(propertyId) ?? 0n);
      return 0;
    }
    const seq = BigInt(last.seq);
    const [roomTypes, ratePlans] = await Promise.all([
      roomTypesOf(d.pool, propertyId),
      ratePlansOf(d.pool, propertyId),
    ]);
    const ranges = changedRanges(changes);
    const wanted = new Set(ranges.keys());
    const grid = await readGrid(
      propertyId,
      roomTypes.filter((rt) => wanted.has(rt.code)).map((rt) => rt.id),
      ranges,
    );
    const events: NewPartnerEvent[] = [];
    const at = d.clock.now();
    for (const clientId of clientIds) {
      const client = await findClient(q, clientId);
      if (client === undefined) continue;
      const mapped = await mappingsOf(d.pool, propertyId, client.provider);
      const external = new Map([
        ...roomTypes.map((rt) => [`rt:${rt.code}`, mapped.get(rt.id) ?? rt.code] as const),
        ...ratePlans.map((rp) => [`rp:${rp.code}`, mapped.get(rp.id) ?? rp.code] as const),
      ]);
      // In the partner's codes, ordered by them (room type, rate plan, date): the order the parts are split in.
      const cells = grid.cells
        .map((c) => ({
          ...c,
          roomTypeCode: external.get(`rt:${c.roomTypeCode}`) ?? c.roomTypeCode,
          ratePlanCode: external.get(`rp:${c.ratePlanCode}`) ?? c.ratePlanCode,
        }))
        .sort((a, b) => (cellKey(a) < cellKey(b) ? -1 : cellKey(a) > cellKey(b) ? 1 : 0));
      const parts = Math.max(1, Math.ceil(cells.length / cellsPerMessage));
      for (let part = 0; part < parts; part++)
        events.push({
          clientId,
          propertyId,
          type: "ari.updated",
          occurredAt: at,
          data: {
            seq: seq.toString(),
            fromSeq: BigInt(changes[0]!.seq).toString(),
            cursor: encodeCursor(seq),
            part: part + 1,
            parts,
            currency: grid.currency,
            amountScale: grid.amountScale,
            cells: cells.slice(part * cellsPerMessage, (part + 1) * cellsPerMessage),
          },
        });
    }
    return (await advance(propertyId, cursor, seq, events)) ? 1 : 0;
  }

  /** Moves the property's cursor from `from` to `to` and records the events, unless another process moved it first. */
  async function advance(
    propertyId: string,
    from: bigint | undefined,
    to: bigint,
    events: NewPartnerEvent[] = [],
  ): Promise<boolean> {
    return d.transact(async (tx) => {
      await tx.query("select pg_advisory_xact_lock(hashtext('ari_push'), hashtext($1))", [propertyId]);
      const [row] = await tx.query<{ seq: string }>(
        "select seq::text as seq from ari_push_cursors where property_id = $1",
        [propertyId],
      );
      if ((row === undefined ? undefined : BigInt(row.seq)) !== from) return false;
      await tx.query(
        `insert into ari_push_cursors (property_id, seq, pushed_at) values ($1, $2, $3)
         on conflict (property_id) do update set seq = excluded.seq, pushed_at = excluded.pushed_at`,
        [propertyId, to.toString(), d.clock.now()],
      );
      await recordPartnerEvents(tx, events);
      return true;
    });
  }

  /** The current values of each changed (room type, rate plan) over its changed range, in code and date order. */
  async function readGrid(
    propertyId: string,
    roomTypeIds: string[],
    ranges: Map<string, Map<string, Span[]>>,
  ): Promise<{ currency: string; amountScale: number; cells: AriCell[] }> {
    let from: string | undefined;
    let to: string | undefined;
    for (const plans of ranges.values())
      for (const spans of plans.values())
        for (const r of spans) {
          if (from === undefined || r.from < from) from = r.from;
          if (to === undefined || r.to > to) to = r.to;
        }
    const cells: AriCell[] = [];
    let currency = "";
    let amountScale = 2;
    if (from === undefined || to === undefined || roomTypeIds.length === 0) return { currency, amountScale, cells };
    const byPair = new Map<string, AriCell[]>();
    for (let start = from; start < to; start = addDays(start, readDays)) {
      const end = addDays(start, readDays) < to ? addDays(start, readDays) : to;
      let page = "";
      do {
        const ari = await d.inventory.getAri(propertyId, { from: start, to: end, roomTypeIds, cursor: page });
        currency = ari.currency;
        amountScale = ari.amountScale;
        for (const rt of ari.roomTypes) {
          const plans = ranges.get(rt.code);
          for (const rp of rt.ratePlans) {
            const spans = plans?.get(rp.code) ?? plans?.get("*");
            if (spans === undefined) continue;
            const key = `${rt.code}\u0000${rp.code}`;
            const list = byPair.get(key) ?? [];
            byPair.set(key, list);
            for (const day of rp.days)
              if (within(spans, day.date))
                list.push({
                  roomTypeCode: rt.code,
                  ratePlanCode: rp.code,
                  date: day.date,
                  available: day.available,
                  priceMinor: day.priceMinor === undefined ? null : day.priceMinor.toString(),
                  ...(day.occupancyPrices === undefined
                    ? {}
                    : {
                        occupancyPrices: day.occupancyPrices.map((p) => ({
                          adults: p.adults,
                          priceMinor: p.priceMinor.toString(),
                        })),
                      }),
                  minStay: day.minStay ?? null,
                  maxStay: day.maxStay ?? null,
                  closedToArrival: day.closedToArrival,
                  closedToDeparture: day.closedToDeparture,
                  stopSell: day.stopSell,
                });
          }
        }
        page = ari.nextCursor;
      } while (page !== "");
    }
    for (const key of [...byPair.keys()].sort()) cells.push(...byPair.get(key)!);
    return { currency, amountScale, cells };
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = scan()
        .then(() => undefined)
        .catch((err: unknown) => d.logger.error({ err }, "ARI push failed; retried at the next tick"))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, tickMs);
  }

  return {
    /** One pass by hand, waiting for its pushes. Returns the pushes made. */
    async tick(): Promise<number> {
      const pushes = await Promise.all(await scan());
      return pushes.reduce((a, b) => a + b, 0);
    },
    start(): void {
      stopped = false;
      schedule();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await inFlight;
    },
  };
}

type Span = { from: string; to: string };

/**
 * Per room type code, per rate plan code ("*": every plan of the room type, an availability change), the changed
 * days of the push as sorted, merged ranges [from, to).
 */
function changedRanges(changes: readonly AriChangeRow[]): Map<string, Map<string, Span[]>> {
  const out = new Map<string, Map<string, Span[]>>();
  for (const c of changes)
    for (const rt of c.roomTypes) {
      const plans = out.get(rt) ?? new Map<string, Span[]>();
      out.set(rt, plans);
      for (const rp of c.ratePlans.length === 0 ? ["*"] : c.ratePlans)
        plans.set(rp, [...(plans.get(rp) ?? []), { from: c.from, to: c.to }]);
    }
  for (const plans of out.values()) {
    // A plan's days include its room type's availability changes ("*").
    const all = plans.get("*") ?? [];
    for (const [rp, spans] of plans) plans.set(rp, merge(rp === "*" ? spans : [...spans, ...all]));
  }
  return out;
}

function merge(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last !== undefined && s.from <= last.to) {
      if (s.to > last.to) last.to = s.to;
    } else out.push({ ...s });
  }
  return out;
}

const within = (spans: readonly Span[], date: string) => spans.some((s) => date >= s.from && date < s.to);
