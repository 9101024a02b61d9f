import type pg from "pg";
import { checkMoneyBound } from "../../lib/money.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { poolQueryable, type Queryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, requireId } from "../../lib/ids.ts";
import { parseRange } from "../../lib/dates.ts";
import type { LazyList } from "../../lib/lazy-list.ts";
import { recordEvent, type AvailabilityEventData } from "../events/index.ts";
import { propertyById } from "../properties/index.ts";
import { recordAriChanges, type AriReason } from "./ari-log.ts";
import { createAriReader, maxAvailabilityDays, type Ari, type AriInput, type AriRoomType } from "./ari-read.ts";
import { checkAriWrite, type AriWrite } from "./ari-write-check.ts";
import { writeAri } from "./ari-write.ts";
import { readAvailability, type RoomTypeAvailability } from "./availability.ts";
import { setAvailabilityCaps, type SetAvailabilityCapsInput } from "./caps.ts";
import { maxPriceDays, requireRoomType } from "./inventory-checks.ts";
import { takeRooms } from "./inventory-days.ts";
import * as repo from "./inventory.repository.ts";
import type { OccupancyPrice } from "./occupancy-prices.ts";
import { upsertPrices } from "./prices.repository.ts";
import { checkRestrictionInput, upsertRestrictions, type SetRestrictionsInput } from "./restrictions.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** Prices, room blocks, restrictions, availability caps and the ARI grid (staff and partners). */
export interface AriService {
  setPrices(
    propertyId: string,
    input: {
      ratePlanId: string;
      roomTypeId: string;
      from: string;
      to: string;
      amountMinor: bigint;
      /** A plan that prices by occupancy: prices per adults instead of amountMinor (which must be 0). */
      occupancyPrices?: readonly OccupancyPrice[];
    },
    keyed?: Keyed,
  ): Promise<number>;
  createRoomBlock(
    propertyId: string,
    input: { roomTypeId: string; from: string; to: string; count: number; name?: string },
    keyed?: Keyed,
  ): Promise<string>;
  getAvailability(
    propertyId: string,
    input: { from: string; to: string; roomTypeCodes?: readonly string[] },
  ): Promise<RoomTypeAvailability[]>;
  /** Sets restrictions of rate plans x room types for the chosen weekdays of a range; returns the cells written. */
  setRestrictions(propertyId: string, input: SetRestrictionsInput, keyed?: Keyed): Promise<number>;
  /** Sets (-1: lifts) the availability cap of room types for the chosen weekdays of a range; returns the days. */
  setAvailabilityCaps(propertyId: string, input: SetAvailabilityCapsInput, keyed?: Keyed): Promise<number>;
  /**
   * Writes a batch of prices and restrictions (ari-write.ts) in one transaction, all or nothing; returns the
   * distinct cells (rate plan x room type x day) written.
   */
  writeAri(propertyId: string, changes: readonly AriWrite[], keyed?: Keyed): Promise<number>;
  /** Availability, prices and restrictions per room type x rate plan x day over [from, to) (at most 366 days). */
  getAri(propertyId: string, input: AriInput): Promise<Ari>;
  /**
   * getAri's answer, read as getAri reads it, with each room type's days built when the list reaches it: what an
   * answer written as it is read holds at a time is the grid's compact form and one room type, not the grid's objects.
   */
  getAriInParts(propertyId: string, input: AriInput): Promise<Ari<LazyList<AriRoomType>>>;
}

/** The availability.changed hint and the ARI delta feed entry of one change (call it last in the transaction). */
async function availabilityChanged(
  tx: Tx,
  propertyId: string,
  now: Date,
  data: AvailabilityEventData,
  ratePlans: readonly string[] = [],
): Promise<void> {
  await recordEvent(tx, { propertyId, type: "availability.changed", occurredAt: now, data });
  await recordAriChanges(
    tx,
    propertyId,
    [{ reason: data.reason as AriReason, from: data.from, to: data.to, roomTypes: data.roomTypes, ratePlans }],
    now,
  );
}

export function createAriService(deps: {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  replicaReads?: Queryable | undefined;
}): AriService {
  const { transact, clock } = deps;
  const reads = poolQueryable(deps.pool);
  const readAri = createAriReader({ reads, replicaReads: deps.replicaReads });

  /**
   * SetPrices with prices per adults: one ARI write change (the same checks, records and feed entry), its fields
   * named as SetPrices names them (`occupancyPrices[j].adults`, `roomTypeId`).
   */
  async function setOccupancyPrices(propertyId: string, input: Parameters<AriService["setPrices"]>[1], keyed?: Keyed) {
    if (input.amountMinor !== 0n)
      throw invalidField(
        "amountMinor",
        "0 with occupancyPrices (the price for max occupancy is its entry there)",
        "validation_failed",
      );
    parseRange(input.from, input.to, maxPriceDays);
    const change: AriWrite = {
      ratePlanId: requireId(input.ratePlanId, "Rate plan"),
      roomTypeId: requireId(input.roomTypeId, "Room type"),
      from: input.from,
      to: input.to,
      weekdays: [],
      occupancyPrices: input.occupancyPrices,
    };
    const rename = (t: string) => t.replace(/changes\[0\]\.?:?\s?/g, "").replace("ratePlanCode", "roomTypeId");
    try {
      checkAriWrite([change]);
      return await transact((tx) => writeAri(tx, propertyId, [change], clock.now()), keyed);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      const details = e.details.map((d) => ({ field: rename(d.field), reason: d.reason }));
      const message = details.length > 0 ? details.map((d) => `${d.field}: ${d.reason}`).join("; ") : rename(e.message);
      throw new AppError(e.code, message, { details });
    }
  }

  return {
    async setPrices(propertyId, input, keyed) {
      if ((input.occupancyPrices ?? []).length > 0) return setOccupancyPrices(propertyId, input, keyed);
      parseRange(input.from, input.to, maxPriceDays);
      if (input.amountMinor < 0n) throw invalidField("amountMinor", "0 or more (minor units)");
      checkMoneyBound("amountMinor", input.amountMinor);
      return transact(async (tx) => {
        const rp = await repo.findRatePlan(tx, propertyId, requireId(input.ratePlanId, "Rate plan"));
        if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
        const rt = await requireRoomType(tx, propertyId, input.roomTypeId);
        if (!rp.roomTypeIds.includes(rt.id))
          throw invalidField("roomTypeId", "the rate plan does not cover this room type", "validation_failed");
        const days = await upsertPrices(tx, propertyId, rp.id, rt.id, input.from, input.to, input.amountMinor);
        recordChange(tx, {
          propertyId,
          entity: "price",
          entityId: `${rp.id}:${rt.id}`,
          action: "set",
          after: {
            ratePlanCode: rp.code,
            roomTypeCode: rt.code,
            from: input.from,
            to: input.to,
            amountMinor: input.amountMinor,
          },
        });
        await availabilityChanged(
          tx,
          propertyId,
          clock.now(),
          { from: input.from, to: input.to, toExclusive: true, roomTypes: [rt.code], reason: "rate" },
          [rp.code],
        );
        return days;
      }, keyed);
    },

    async createRoomBlock(propertyId, input, keyed) {
      parseRange(input.from, input.to, maxPriceDays);
      if (!Number.isInteger(input.count) || input.count < 1 || input.count > 10_000)
        throw invalidField("count", "1 or more");
      return transact(async (tx) => {
        const now = clock.now();
        const property = await propertyById(tx, propertyId);
        if (input.from < property.businessDate)
          throw invalidField("from", "must not be before the business date", "validation_failed");
        const rt = await requireRoomType(tx, propertyId, input.roomTypeId);
        await takeRooms(tx, {
          propertyId,
          roomTypeId: rt.id,
          counter: "blocked",
          from: input.from,
          to: input.to,
          count: input.count,
        });
        const id = newId();
        await repo.insertRoomBlock(
          tx,
          propertyId,
          {
            id,
            roomTypeId: rt.id,
            name: (input.name ?? "").slice(0, 200),
            from: input.from,
            to: input.to,
            count: input.count,
          },
          now,
        );
        await availabilityChanged(tx, propertyId, now, {
          from: input.from,
          to: input.to,
          toExclusive: true,
          roomTypes: [rt.code],
          reason: "room_block",
        });
        return id;
      }, keyed);
    },

    async getAvailability(propertyId, input) {
      parseRange(input.from, input.to, maxAvailabilityDays);
      return readAvailability(reads, propertyId, input.from, input.to, input.roomTypeCodes ?? []);
    },

    async setRestrictions(propertyId, input, keyed) {
      const weekdays = checkRestrictionInput(input);
      return transact(async (tx) => {
        const pairs: { ratePlanId: string; roomTypeId: string }[] = [];
        const roomTypes = new Map((await repo.listRoomTypes(tx, propertyId)).map((rt) => [rt.id, rt.code]));
        const ratePlanCodes: string[] = [];
        for (const id of new Set(input.ratePlanIds)) {
          const rp = await repo.findRatePlan(tx, propertyId, requireId(id, "Rate plan"));
          if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
          ratePlanCodes.push(rp.code);
          const wanted = input.roomTypeIds.length === 0 ? rp.roomTypeIds : [...new Set(input.roomTypeIds)];
          for (const rt of wanted) {
            if (!roomTypes.has(rt)) throw new AppError("not_found", "Room type not found.");
            if (!rp.roomTypeIds.includes(rt))
              throw invalidField(
                "roomTypeIds",
                `rate plan ${rp.code} does not cover room type ${roomTypes.get(rt)}`,
                "validation_failed",
              );
            pairs.push({ ratePlanId: rp.id, roomTypeId: rt });
          }
        }
        const cells = await upsertRestrictions(tx, propertyId, pairs, input, weekdays);
        for (const p of pairs)
          recordChange(tx, {
            propertyId,
            entity: "restriction",
            entityId: `${p.ratePlanId}:${p.roomTypeId}`,
            action: "set",
            after: { ...input, ratePlanIds: undefined, roomTypeIds: undefined },
          });
        const codes = [...new Set(pairs.map((p) => roomTypes.get(p.roomTypeId)!))];
        await availabilityChanged(
          tx,
          propertyId,
          clock.now(),
          { from: input.from, to: input.to, toExclusive: true, roomTypes: codes, reason: "restriction" },
          ratePlanCodes,
        );
        return cells;
      }, keyed);
    },

    async setAvailabilityCaps(propertyId, input, keyed) {
      return transact((tx) => setAvailabilityCaps(tx, propertyId, input, clock.now()), keyed);
    },

    async writeAri(propertyId, changes, keyed) {
      checkAriWrite(changes);
      return transact((tx) => writeAri(tx, propertyId, changes, clock.now()), keyed);
    },

    getAriInParts: readAri,

    async getAri(propertyId, input) {
      const ari = await readAri(propertyId, input);
      return { ...ari, roomTypes: ari.roomTypes.toArray() };
    },
  };
}
