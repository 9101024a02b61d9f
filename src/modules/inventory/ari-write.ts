import { AppError, type FieldViolation } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import type { Statement } from "../../db/queryable.ts";
import type { Tx } from "../../db/transaction.ts";
import { recordEvents } from "../events/index.ts";
import { ariChangesSql, type AriChange } from "./ari-log.ts";
import {
  ariWriteError,
  hasCap,
  hasOccupancy,
  hasRestriction,
  setsPrice,
  weekdayMask,
  type AriWrite,
} from "./ari-write-check.ts";
import * as repo from "./inventory.repository.ts";
import { lockRates } from "./rate-lock.ts";
import { applyCaps } from "./caps.ts";
import { occupancyPlanViolations, writeOccupancyPrices, type OccupancyWrite } from "./occupancy-prices.ts";

/** The changes as one array per column, for unnest (`with ordinality` numbers them: a later change wins). */
function columns(propertyId: string, changes: readonly AriWrite[]): unknown[] {
  const opt = <T>(v: T | undefined) => (v === undefined ? null : v);
  return [
    propertyId,
    changes.map((c) => c.ratePlanId),
    changes.map((c) => c.roomTypeId),
    changes.map((c) => c.from),
    changes.map((c) => c.to),
    changes.map((c) => weekdayMask(c.weekdays)),
    changes.map((c) => (c.priceMinor === undefined ? null : c.priceMinor.toString())),
    changes.map((c) => opt(c.minStay)),
    changes.map((c) => opt(c.maxStay)),
    changes.map((c) => opt(c.closedToArrival)),
    changes.map((c) => opt(c.closedToDeparture)),
    changes.map((c) => opt(c.stopSell)),
  ];
}

/** Every cell of every change (numbered `n` in request order), as a WITH item of the statements below. */
const CELLS = `c as (select * from unnest($2::uuid[], $3::uuid[], $4::date[], $5::date[], $6::int[], $7::bigint[], $8::int[], $9::int[],
                                      $10::boolean[], $11::boolean[], $12::boolean[])
                      with ordinality as c(rp, rt, f, t, wd, price, min_stay, max_stay, cta, ctd, ss, n)),
  cells as (select c.*, d.day::date as day
              from c cross join lateral generate_series(c.f, c.t - 1, interval '1 day') as d(day)
             where (c.wd >> (extract(isodow from d.day)::int - 1)) & 1 = 1)`;

/** The last value a change gave `col` in a cell (null: no change set it). */
const last = (col: string) => `(array_agg(${col} order by n desc) filter (where ${col} is not null))[1]`;
const SETS_RESTRICTION =
  "(min_stay is not null or max_stay is not null or cta is not null or ctd is not null or ss is not null)";

/**
 * Each cell's fields merged over the changes (the later change wins), prices upserted, restriction rows inserted
 * where there were none and updated where there were (fields no change set keep their value). The insert and the
 * update touch disjoint rows: the update sees the rows that existed when the statement began, the insert skips
 * them, and no other writer adds one meanwhile (it waits for the rate lock). Named (ADR 0004): every ARI write
 * (partners', OTA XML, the push bench's load) runs this one fixed text, so each connection parses and plans it once.
 */
const applyStatement: Statement = {
  name: "inventory_ari_write",
  text: `with ${CELLS},
     merged as (
       select rp, rt, day, ${last("price")} as price, bool_or(${SETS_RESTRICTION}) as restricts,
              bool_or(min_stay is not null) as set_min, ${last("min_stay")} as min_stay,
              bool_or(max_stay is not null) as set_max, ${last("max_stay")} as max_stay,
              ${last("cta")} as cta, ${last("ctd")} as ctd, ${last("ss")} as ss
         from cells group by rp, rt, day),
     prices as (
       insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
       select $1, rp, rt, day, price from merged where price is not null order by rp, rt, day
       on conflict (property_id, rate_plan_id, room_type_id, date) do update set amount_minor = excluded.amount_minor),
     created as (
       insert into rate_restrictions (property_id, rate_plan_id, room_type_id, date, min_stay, max_stay,
                                      closed_to_arrival, closed_to_departure, stop_sell)
       select $1, rp, rt, day, nullif(min_stay, 0), nullif(max_stay, 0), coalesce(cta, false), coalesce(ctd, false),
              coalesce(ss, false)
         from merged where restricts order by rp, rt, day
       on conflict do nothing),
     updated as (
       update rate_restrictions r set
         min_stay = case when m.set_min then nullif(m.min_stay, 0) else r.min_stay end,
         max_stay = case when m.set_max then nullif(m.max_stay, 0) else r.max_stay end,
         closed_to_arrival = coalesce(m.cta, r.closed_to_arrival),
         closed_to_departure = coalesce(m.ctd, r.closed_to_departure),
         stop_sell = coalesce(m.ss, r.stop_sell)
         from merged m
        where m.restricts and r.property_id = $1 and r.rate_plan_id = m.rp and r.room_type_id = m.rt and r.date = m.day)
     select count(*)::text as cells from merged`,
};

/**
 * Applies checked changes with resolved ids in the caller's transaction, in one statement (applyStatement), then
 * their occupancy prices and availability caps, all sent at once (pipelined: one round trip). The caller holds the
 * property's rate lock (lockRates) from an earlier statement. Returns the distinct cells.
 */
async function applyChanges(
  tx: Tx,
  propertyId: string,
  changes: readonly AriWrite[],
  occupancy: readonly OccupancyWrite[],
): Promise<number> {
  const capped = changes.filter(hasCap);
  const [[row]] = await Promise.all([
    tx.query<{ cells: string }>(applyStatement, columns(propertyId, changes)),
    writeOccupancyPrices(tx, propertyId, occupancy),
    applyCaps(
      tx,
      propertyId,
      capped.map((c) => ({ ...c, weekdayMask: weekdayMask(c.weekdays), cap: c.availabilityCap! })),
    ),
  ]);
  return Number(row!.cells);
}

/**
 * Writes a batch of ARI changes that passed checkAriWrite in the caller's transaction: rate plans must cover their
 * room types (422 naming every change that breaks it), then the changes are applied with, per reason ("rate",
 * "restriction"), one availability.changed hint and one ARI feed entry spanning the room types, rate plans and dates
 * written: the records a staff SetPrices / SetRestrictions makes. Returns the distinct cells written.
 *
 * Three round trips: BEGIN, the rate lock and the reads (pipelined: the reads run after the lock); then, once the
 * changes passed the checks, the cells, the events, the ARI feed entry (last: its counter row stays locked until
 * commit, ari-log.ts), the audit entries and the COMMIT, all sent at once (Tx.queryLast). A failing statement aborts
 * the transaction, so the ones behind it fail and the COMMIT rolls back; its error is the one the write reports.
 * The caller's transaction ends with this write (nothing may follow it).
 */
export async function writeAri(tx: Tx, propertyId: string, changes: readonly AriWrite[], now: Date): Promise<number> {
  // the lock first: a write that fails the checks below holds it only until its rollback
  const [, roomTypes, ratePlans] = await Promise.all([
    lockRates(tx, propertyId),
    repo.listRoomTypes(tx, propertyId),
    repo.listRatePlans(tx, propertyId),
  ]);
  const rtCode = new Map(roomTypes.map((rt) => [rt.id, rt.code]));
  const rtById = new Map(roomTypes.map((rt) => [rt.id, rt]));
  const plans = new Map(ratePlans.map((rp) => [rp.id, rp]));
  const uncovered: FieldViolation[] = [];
  for (const [i, c] of changes.entries()) {
    const rp = plans.get(c.ratePlanId);
    const rt = rtById.get(c.roomTypeId);
    if (rp === undefined) throw new AppError("not_found", `changes[${i}]: rate plan not found.`);
    if (rt === undefined) throw new AppError("not_found", `changes[${i}]: room type not found.`);
    if (!rp.roomTypeIds.includes(c.roomTypeId))
      uncovered.push({
        field: `changes[${i}].ratePlanCode`,
        reason: `rate plan ${rp.code} does not cover room type ${rt.code}`,
      });
    uncovered.push(...occupancyPlanViolations(`changes[${i}]`, c.occupancyPrices ?? [], rp, rt));
  }
  if (uncovered.length > 0) throw ariWriteError(uncovered);

  // the max occupancy's entry is the day's price; the others are the occupancy rows
  const occupancy: OccupancyWrite[] = [];
  const applied = changes.map((c): AriWrite => {
    if (!hasOccupancy(c)) return c;
    const max = rtById.get(c.roomTypeId)!.maxOccupancy;
    for (const p of c.occupancyPrices!)
      if (p.adults < max)
        occupancy.push({ ...c, weekdayMask: weekdayMask(c.weekdays), adults: p.adults, priceMinor: p.priceMinor });
    return { ...c, priceMinor: c.occupancyPrices!.find((p) => p.adults === max)?.priceMinor };
  });
  const cells = applyChanges(tx, propertyId, applied, occupancy);
  for (const c of changes)
    recordChange(tx, {
      propertyId,
      entity: setsPrice(c) ? "price" : "restriction",
      entityId: `${c.ratePlanId}:${c.roomTypeId}`,
      action: "set",
      after: c,
    });
  const entries: AriChange[] = [];
  for (const reason of ["rate", "restriction", "allotment"] as const) {
    const mine = changes.filter((c) =>
      reason === "rate" ? setsPrice(c) : reason === "restriction" ? hasRestriction(c) : hasCap(c),
    );
    if (mine.length === 0) continue;
    entries.push({
      reason,
      from: mine.reduce((a, c) => (c.from < a ? c.from : a), mine[0]!.from),
      to: mine.reduce((a, c) => (c.to > a ? c.to : a), mine[0]!.to),
      roomTypes: [...new Set(mine.map((c) => rtCode.get(c.roomTypeId)!))].sort(),
      // a cap moves availability: every rate plan of the room types
      ratePlans: reason === "allotment" ? [] : [...new Set(mine.map((c) => plans.get(c.ratePlanId)!.code))].sort(),
    });
  }
  const events = recordEvents(
    tx,
    entries.map((e) => ({
      propertyId,
      type: "availability.changed" as const,
      occurredAt: now,
      data: { from: e.from, to: e.to, toExclusive: true, roomTypes: e.roomTypes, reason: e.reason },
    })),
  );
  // last, with the COMMIT: the ARI counter row stays locked until commit (ari-log.ts)
  const feed = ariChangesSql(propertyId, entries, now, 1);
  const fed =
    feed === undefined ? undefined : tx.queryLast(`with ${feed.with} select count(*) from ari_rows`, feed.params);
  // one Promise.all: the first statement to fail (they answer in order) is the error reported
  const [written] = await Promise.all([cells, events, fed]);
  return written;
}
