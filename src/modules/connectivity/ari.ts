import type pg from "pg";
import { invalidField } from "../../errors.ts";
import { type Principal, type PropertyRef } from "../auth/index.ts";
import { ariChangesAfter, ariHead, type InventoryService } from "../inventory/index.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { decodeCursor, nextCursorOf } from "./connectivity.service.ts";
import { parseDate } from "../../lib/dates.ts";
import { mappingsOf, partnerTerms, ratePlansOf, roomTypesOf } from "./reads.repository.ts";

const DAY_MS = 86_400_000;

type Caller = Extract<Principal, { kind: "partner" | "internal" }>;

/**
 * ARI for partners: the inventory module's availability, prices and restrictions in our codes with the caller's
 * provider codes beside them, and the ARI delta feed with the reservation feed's cursor rules.
 */
export function createAriReads(deps: { pool: pg.Pool; inventory: InventoryService }) {
  return {
    async ari(
      caller: Caller,
      property: PropertyRef,
      q: { from: string; to: string; roomTypes: string[]; ratePlans: string[]; cursor: string },
    ) {
      parseDate("from", q.from);
      parseDate("to", q.to);
      const days = (Date.parse(q.to) - Date.parse(q.from)) / DAY_MS;
      if (days < 1) throw invalidField("to", "must be after from (to is exclusive)");
      if (days > 366) throw invalidField("to", "the range is at most 366 days");
      const [mapped, roomTypes, ratePlans] = await Promise.all([
        mappingsOf(deps.pool, property.id, caller.provider),
        roomTypesOf(deps.pool, property.id),
        ratePlansOf(deps.pool, property.id),
      ]);
      // A filter names our code or the provider's; nothing matching a filter selects nothing.
      const pick = (items: { id: string; code: string }[], wanted: string[]) => {
        const w = new Set(
          wanted
            .flatMap((x) => x.split(","))
            .map((x) => x.trim())
            .filter((x) => x !== ""),
        );
        return w.size === 0
          ? undefined
          : items.filter((i) => w.has(i.code) || w.has(mapped.get(i.id) ?? "")).map((i) => i.id);
      };
      const roomTypeIds = pick(roomTypes, q.roomTypes);
      const ratePlanIds = pick(ratePlans, q.ratePlans);
      const terms = new Map(ratePlans.map((rp) => [rp.id, partnerTerms(rp)]));
      const ari = await deps.inventory.getAriInParts(property.id, {
        from: q.from,
        to: q.to,
        ...(roomTypeIds !== undefined ? { roomTypeIds: roomTypeIds.length === 0 ? ["-"] : roomTypeIds } : {}),
        ...(ratePlanIds !== undefined ? { ratePlanIds: ratePlanIds.length === 0 ? ["-"] : ratePlanIds } : {}),
        cursor: q.cursor,
        // from the replica while it keeps up: the delta feed (changes, read from the primary) tells what changed
        mayLag: true,
      });
      return {
        propertyCode: property.code,
        from: q.from,
        to: q.to,
        toExclusive: true,
        currency: ari.currency,
        amountScale: ari.amountScale,
        // built part by part as the answer is written (see InventoryService.getAriInParts)
        roomTypes: ari.roomTypes.map((rt) => ({
          code: rt.code,
          externalCode: mapped.get(rt.id),
          ratePlans: rt.ratePlans.map((rp) => ({
            code: rp.code,
            externalCode: mapped.get(rp.id),
            // the inventory's days are already the message's (built once, never copied)
            days: rp.days,
            ...terms.get(rp.id),
          })),
        })),
        nextCursor: ari.nextCursor,
        hasMore: ari.nextCursor !== "",
      };
    },

    async changes(
      caller: Caller,
      property: PropertyRef,
      opts: { cursor: string; updatedSince: Date | undefined; limit: number },
    ) {
      const limit = opts.limit === 0 ? 100 : opts.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalidField("limit", "must be from 1 to 500");
      const after = opts.cursor === "" ? 0n : decodeCursor(opts.cursor);
      const q = poolQueryable(deps.pool);
      const head = await ariHead(q, property.id);
      const [rows, mapped, roomTypes, ratePlans] = await Promise.all([
        ariChangesAfter(q, property.id, after, opts.cursor === "" ? opts.updatedSince : undefined, limit + 1),
        mappingsOf(deps.pool, property.id, caller.provider),
        roomTypesOf(deps.pool, property.id),
        ratePlansOf(deps.pool, property.id),
      ]);
      const external = new Map([
        ...roomTypes.map((rt) => [`rt:${rt.code}`, mapped.get(rt.id)] as const),
        ...ratePlans.map((rp) => [`rp:${rp.code}`, mapped.get(rp.id)] as const),
      ]);
      const page = rows.slice(0, limit);
      return {
        data: page.map((c) => ({
          seq: c.seq,
          reason: c.reason,
          from: c.from,
          to: c.to,
          toExclusive: true,
          roomTypes: c.roomTypes.map((code) => ({ code, externalCode: external.get(`rt:${code}`) })),
          ratePlans: c.ratePlans.map((code) => ({ code, externalCode: external.get(`rp:${code}`) })),
          changedAt: c.changedAt,
        })),
        nextCursor: nextCursorOf(after, page.at(-1)?.seq, head),
        hasMore: rows.length > limit,
      };
    },
  };
}

export type AriReads = ReturnType<typeof createAriReads>;
