import type { Queryable, SqlPart } from "../../db/queryable.ts";

/**
 * Why ARI changed, as the availability.changed hint's `reason` and the ARI delta feed item's: a booking or its
 * change ("reservation"), a room block, a room out of order or back, rooms added ("inventory"), a price ("rate"),
 * a restriction ("restriction") or an availability cap set by a partner managing allotment ("allotment").
 */
export type AriReason =
  "reservation" | "room_block" | "out_of_order" | "inventory" | "rate" | "restriction" | "allotment";

export interface AriChange {
  reason: AriReason;
  from: string;
  /** Exclusive. */
  to: string;
  /** Room type codes. */
  roomTypes: readonly string[];
  /** Rate plan codes; empty: every rate plan of the room types (availability changes). */
  ratePlans: readonly string[];
}

/**
 * The ARI changes as WITH items of the caller's statement (`ari_rows` returns one row per change appended), numbered
 * from the property's ARI counter. The counter row stays locked until commit, so this belongs in the LAST statement
 * of the transaction (after the row locks of the change itself): sequence numbers then become visible in commit order
 * and a reader never skips one. A change that ends with another counter (a reservation's change sequence) takes both
 * in that one statement, so the hot counter rows are held for one round trip and the commit. Undefined: nothing to
 * append.
 */
export function ariChangesSql(
  propertyId: string,
  changes: readonly AriChange[],
  at: Date,
  first: number,
): SqlPart | undefined {
  const list = changes.filter((c) => c.roomTypes.length > 0 && c.from < c.to);
  if (list.length === 0) return undefined;
  const $ = (n: number) => `$${first + n - 1}`;
  return {
    with: `ari_counter as (insert into ari_counters as k (property_id, seq) values (${$(1)}, ${$(2)})
                on conflict (property_id) do update set seq = k.seq + ${$(2)} returning seq),
     ari_rows as (insert into ari_changes (property_id, seq, reason, from_date, to_date, room_types, rate_plans, changed_at)
     select ${$(1)}, c.seq - ${$(2)} + x.n, x.reason, x.from_date, x.to_date,
            array(select jsonb_array_elements_text(x.room_types)), array(select jsonb_array_elements_text(x.rate_plans)), ${$(8)}
       from ari_counter c cross join unnest(${$(3)}::text[], ${$(4)}::date[], ${$(5)}::date[], ${$(6)}::jsonb[], ${$(7)}::jsonb[]) with ordinality as x(reason, from_date, to_date, room_types, rate_plans, n)
     returning 1)`,
    params: [
      propertyId,
      list.length,
      list.map((c) => c.reason),
      list.map((c) => c.from),
      list.map((c) => c.to),
      list.map((c) => JSON.stringify([...new Set(c.roomTypes)].sort())),
      list.map((c) => JSON.stringify([...new Set(c.ratePlans)].sort())),
      at,
    ],
  };
}

/** Appends ARI changes to the delta feed in the caller's transaction on their own (see ariChangesSql: call it last). */
export async function recordAriChanges(
  tx: Queryable,
  propertyId: string,
  changes: readonly AriChange[],
  at: Date,
): Promise<void> {
  const part = ariChangesSql(propertyId, changes, at, 1);
  if (part !== undefined) await tx.query(`with ${part.with} select count(*) from ari_rows`, part.params);
}

export interface AriChangeRow {
  seq: string;
  reason: AriReason;
  from: string;
  to: string;
  roomTypes: string[];
  ratePlans: string[];
  changedAt: Date;
}

/** One page of the ARI delta feed after `after`, in sequence (= commit) order. */
export function ariChangesAfter(
  q: Queryable,
  propertyId: string,
  after: bigint,
  changedSince: Date | undefined,
  limit: number,
): Promise<AriChangeRow[]> {
  return q.query<AriChangeRow>(
    `select seq::text as seq, reason, to_char(from_date, 'YYYY-MM-DD') as "from", to_char(to_date, 'YYYY-MM-DD') as "to",
            room_types as "roomTypes", rate_plans as "ratePlans", changed_at as "changedAt"
       from ari_changes
      where property_id = $1 and seq > $2 and ($3::timestamptz is null or changed_at >= $3)
      order by ari_changes.seq limit $4`,
    [propertyId, after.toString(), changedSince ?? null, limit],
  );
}

/** The last committed ARI sequence number of the property (0 before the first change). */
export async function ariHead(q: Queryable, propertyId: string): Promise<bigint> {
  const [row] = await q.query<{ seq: string }>("select seq::text as seq from ari_counters where property_id = $1", [
    propertyId,
  ]);
  return BigInt(row?.seq ?? "0");
}

/** The last committed ARI sequence number of every property that has one (what the ARI push compares with). */
export async function ariHeads(q: Queryable): Promise<Map<string, bigint>> {
  const rows = await q.query<{ property_id: string; seq: string }>(
    "select property_id, seq::text as seq from ari_counters",
  );
  return new Map(rows.map((r) => [r.property_id, BigInt(r.seq)]));
}
