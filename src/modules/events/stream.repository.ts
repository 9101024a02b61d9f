import type pg from "pg";
import { runQuery, type Statement } from "../../db/queryable.ts";

/** A place in a property's event stream: the writing transaction's id (xid8, as decimal text), then the event id. */
export interface Position {
  tx: string;
  id: string;
}

/** Before every event kept (rows older than the stream have tx 0 and sort by id). */
export const origin: Position = { tx: "0", id: "00000000-0000-0000-0000-000000000000" };

export interface StreamedEvent {
  position: Position;
  id: string;
  type: string;
  occurredAt: Date;
  createdAt: Date;
  data: Record<string, unknown>;
}

/** Whether `a` comes after `b` in stream order. */
export function isAfter(a: Position, b: Position): boolean {
  const ta = BigInt(a.tx);
  const tb = BigInt(b.tx);
  return ta !== tb ? ta > tb : a.id > b.id;
}

const cursorPattern = /^([0-9]{1,20})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The cursor a client sees (opaque to it): `<tx>.<event id>`. */
export function cursorOf(p: Position): string {
  return `${p.tx}.${p.id}`;
}

/** A cursor back to its position; undefined when it is not one of ours. */
export function positionOf(cursor: string): Position | undefined {
  const m = cursorPattern.exec(cursor.toLowerCase());
  if (m === null || BigInt(m[1]!) >= 2n ** 64n) return undefined;
  return { tx: m[1]!, id: m[2]! };
}

// One snapshot for the rows and the horizon: a row whose transaction is not older than the snapshot's xmin may
// still have an earlier neighbour uncommitted, so it is `held` (and so is every row after it, as they sort by tx).
const page: Statement = {
  name: "event_stream_page",
  text: `with s as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
    select e.tx_id::text as tx, e.id, e.type, e.occurred_at as "occurredAt", e.created_at as "createdAt", e.data,
      e.tx_id >= s.xmin as held
    from domain_events e, s
    where e.property_id = $1 and (e.tx_id, e.id) > ($2::xid8, $3::uuid)
    order by e.tx_id, e.id
    limit $4`,
};

/**
 * Up to `limit` events of the property after `after` that may be delivered, in stream order; `held` when the
 * page stopped at a row whose transaction's neighbours are not all finished (read again shortly), `full` when
 * more may follow at once.
 */
export async function eventsAfter(
  pool: pg.Pool,
  propertyId: string,
  after: Position,
  limit: number,
): Promise<{ events: StreamedEvent[]; held: boolean; full: boolean }> {
  const { rows } = await runQuery<{
    tx: string;
    id: string;
    type: string;
    occurredAt: Date;
    createdAt: Date;
    data: Record<string, unknown>;
    held: boolean;
  }>(pool, page, [propertyId, after.tx, after.id, limit]);
  const events: StreamedEvent[] = [];
  for (const r of rows) {
    if (r.held) return { events, held: true, full: false };
    events.push({
      position: { tx: r.tx, id: r.id },
      id: r.id,
      type: r.type,
      occurredAt: r.occurredAt,
      createdAt: r.createdAt,
      data: r.data,
    });
  }
  return { events, held: false, full: rows.length === limit };
}

const head: Statement = {
  name: "event_stream_head",
  text: `select e.tx_id::text as tx, e.id from domain_events e
    where e.property_id = $1 and e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
    order by e.tx_id desc, e.id desc limit 1`,
};

/** The last deliverable event of the property (the origin when there is none): where "from now" starts. */
export async function streamHead(pool: pg.Pool, propertyId: string): Promise<Position> {
  const { rows } = await runQuery<Position>(pool, head, [propertyId]);
  return rows[0] ?? origin;
}

/** The channel recordEvents notifies (payload: the property id) when its transaction commits. */
export const eventChannel = "hotelops_domain_events";
