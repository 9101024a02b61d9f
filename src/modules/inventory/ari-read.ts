import type { Queryable } from "../../db/queryable.ts";
import { invalidField } from "../../errors.ts";
import { addDays, parseRange } from "../../lib/dates.ts";
import { LazyList } from "../../lib/lazy-list.ts";
import { concurrencyLimit } from "../../lib/limit.ts";
import { propertyById } from "../properties/index.ts";
import { ariDays, readRatesAndRestrictions, type AriDay } from "./ari-grid.ts";
import { readAvailability } from "./availability.ts";
import { listRatePlans, listRoomTypes } from "./inventory.repository.ts";
import { dayOccupancyPrices, readOccupancyPrices } from "./occupancy-prices.ts";

/** Longest availability or ARI read. */
export const maxAvailabilityDays = 366;
/**
 * Most cells (room type x rate plan x day) of one ARI page: a hotel's whole year of 50 room types x 5 rate plans
 * (91,500) is one page; a larger grid is read in pages of whole room types, so what one answer holds is bounded on
 * every face (Connect and gRPC build a page's message whole).
 */
const ariCellsPerPage = 100_000;

export interface AriInput {
  from: string;
  to: string;
  roomTypeIds?: readonly string[];
  ratePlanIds?: readonly string[];
  /** Where the page starts: a previous page's nextCursor ("" or absent: the first page). */
  cursor?: string;
  /**
   * The caller accepts an answer up to the replica bound (REPLICA_MAX_LAG_MS) old: the page is read from the
   * replica while it keeps up (partners' ARI reads; the delta feed tells what changed since). Staff reads and the
   * ARI pusher read the primary.
   */
  mayLag?: boolean;
}

export interface AriRoomType {
  id: string;
  code: string;
  ratePlans: { id: string; code: string; days: AriDay[] }[];
}

export interface Ari<RoomTypes = AriRoomType[]> {
  currency: string;
  amountScale: number;
  /** Room types in code order, whole, at most ariCellsPerPage cells (at least one room type when any remain). */
  roomTypes: RoomTypes;
  /** Where the next page starts; "" on the last page. */
  nextCursor: string;
}

/** An ARI cursor: the code of the last room type of a page, opaque to callers. */
const ariCursor = (code: string) => Buffer.from(`ari:${code}`).toString("base64url");

function afterCode(cursor: string): string | undefined {
  if (cursor === "") return undefined;
  const m = /^ari:([A-Z0-9][A-Z0-9_-]{0,31})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (m === null) throw invalidField("cursor", "is not a cursor returned by this API");
  return m[1];
}

/** The ARI grid of a property read by pages (getAri, getAriInParts). */
export function createAriReader(deps: { reads: Queryable; replicaReads?: Queryable | undefined }) {
  const ariReads = concurrencyLimit(1);
  const { reads } = deps;

  /**
   * getAriInParts: the grid read whole in its compact form, each part's days built as it is read. One read at a
   * time, the rest wait in line (an invalid range or cursor is refused before): a caller that builds the whole page
   * (Connect, gRPC) does it right after its read, so what concurrent large reads hold stays bounded. The REST face
   * builds its page while the client takes it, after the read, holding the compact grid meanwhile.
   */
  const readAri = (propertyId: string, input: AriInput) => {
    const { days } = parseRange(input.from, input.to, maxAvailabilityDays);
    const after = afterCode(input.cursor ?? "");
    return ariReads(() => readAriPage(propertyId, input, days, after));
  };
  const readAriPage = async (
    propertyId: string,
    input: AriInput,
    days: number,
    after: string | undefined,
  ): Promise<Ari<LazyList<AriRoomType>>> => {
    // one place for the whole page, so its room types, prices and availability agree
    const q = input.mayLag === true ? (deps.replicaReads ?? reads) : reads;
    const wantRt = new Set(input.roomTypeIds ?? []);
    const wantRp = new Set(input.ratePlanIds ?? []);
    const [property, allRoomTypes, ratePlans] = await Promise.all([
      propertyById(q, propertyId),
      listRoomTypes(q, propertyId),
      listRatePlans(q, propertyId),
    ]);
    const plans = ratePlans.filter((rp) => wantRp.size === 0 || wantRp.has(rp.id));
    const selected = allRoomTypes
      .filter((rt) => (wantRt.size === 0 || wantRt.has(rt.id)) && (after === undefined || rt.code > after))
      .sort((a, b) => (a.code < b.code ? -1 : 1))
      .map((rt) => ({ rt, plans: plans.filter((rp) => rp.roomTypeIds.includes(rt.id)) }));
    // whole room types while the page holds at most ariCellsPerPage cells, at least one
    let cells = 0;
    let count = 0;
    while (count < selected.length && (count === 0 || cells + selected[count]!.plans.length * days <= ariCellsPerPage))
      cells += selected[count++]!.plans.length * days;
    const page = selected.slice(0, count);
    const pairs = page.flatMap(({ rt, plans }) => plans.map((rp) => ({ ratePlanId: rp.id, roomTypeId: rt.id })));
    const occupancyPairs = page.flatMap(({ rt, plans }) =>
      plans.filter((rp) => rp.pricesByOccupancy).map((rp) => ({ ratePlanId: rp.id, roomTypeId: rt.id })),
    );
    const [availability, grid, occupancy] = await Promise.all([
      page.length === 0
        ? []
        : readAvailability(
            q,
            propertyId,
            input.from,
            input.to,
            page.map(({ rt }) => rt.code),
          ),
      readRatesAndRestrictions(q, propertyId, pairs, input.from, input.to),
      readOccupancyPrices(q, propertyId, occupancyPairs, input.from, input.to),
    ]);
    const availableOf = new Map(availability.map((a) => [a.roomTypeId, a.days.map((d) => d.available)]));
    const dates = Array.from({ length: days }, (_, i) => addDays(input.from, i));
    const build = ({ rt, plans }: (typeof page)[number]): AriRoomType => {
      const available = availableOf.get(rt.id)!;
      return {
        id: rt.id,
        code: rt.code,
        ratePlans: plans.map((rp) => {
          const days = ariDays(dates, available, grid.get(`${rp.id}|${rt.id}`));
          if (rp.pricesByOccupancy) {
            const stored = occupancy.get(`${rp.id}|${rt.id}`);
            days.forEach(
              (d, i) => (d.occupancyPrices = dayOccupancyPrices(stored?.get(i), rt.maxOccupancy, d.priceMinor)),
            );
          }
          return { id: rp.id, code: rp.code, days };
        }),
      };
    };
    return {
      currency: property.currency,
      amountScale: property.amountScale,
      // a part per room type (a year of 5 rate plans: 1,830 days)
      roomTypes: new LazyList(function* () {
        for (const item of page) yield [build(item)];
      }),
      nextCursor: count < selected.length ? ariCursor(page.at(-1)!.rt.code) : "",
    };
  };

  return readAri;
}
