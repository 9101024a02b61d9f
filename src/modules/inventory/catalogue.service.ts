import type pg from "pg";
import type { KeyPage } from "../../lib/page.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { conflictOnDuplicate, poolQueryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { addDays } from "../../lib/dates.ts";
import { newId, requireId } from "../../lib/ids.ts";
import { propertyById } from "../properties/index.ts";
import { recordAriChanges } from "./ari-log.ts";
import { checkCode, checkName, maxPriceDays, requireRoomType } from "./inventory-checks.ts";
import { changeRoomCount } from "./inventory-days.ts";
import * as repo from "./inventory.repository.ts";
import {
  boardTypes,
  type BoardType,
  type RatePlan,
  type RatePlanDeposit,
  type RatePlanPolicy,
  type Room,
  type RoomType,
} from "./inventory.repository.ts";
import { writeRatePlanOccupancyPricing } from "./occupancy-prices.ts";
import { checkRatePlanDeposit, checkRatePlanPolicy, writeRatePlanDeposit, writeRatePlanPolicy } from "./rate-policy.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** Rate plans of one property: a room type's year is then at most 91,500 cells, within one ARI page. */
const maxRatePlans = 250;
/** Room types of one property: its availability for a year is then at most 36,600 days in one answer. */
const maxRoomTypes = 100;

/** 409 when the property already has `max` rows of `table` (checked in the transaction that adds one). */
async function checkCount(tx: Tx, table: "room_types" | "rate_plans", propertyId: string, max: number, what: string) {
  if ((await repo.countOfProperty(tx, table, propertyId)) >= max)
    throw new AppError("conflict", `A property has at most ${max} ${what}.`);
}

/** A property's room types, rooms and rate plans with their policies. */
export interface CatalogueService {
  createRoomType(
    propertyId: string,
    input: { code: string; name: string; maxOccupancy: number },
    keyed?: Keyed,
  ): Promise<RoomType>;
  /** By code; with `page`, up to page.limit + 1 after its key (the RPC pages). */
  listRoomTypes(propertyId: string, page?: KeyPage): Promise<RoomType[]>;
  createRoom(propertyId: string, input: { number: string; roomTypeId: string }, keyed?: Keyed): Promise<Room>;
  /** By number; with `page`, up to page.limit + 1 after its key. */
  listRooms(propertyId: string, page?: KeyPage): Promise<Room[]>;
  createRatePlan(
    propertyId: string,
    input: { code: string; name: string; boardType: BoardType; roomTypeIds: string[]; pricesByOccupancy?: boolean },
    keyed?: Keyed,
  ): Promise<RatePlan>;
  /** By code; with `page`, up to page.limit + 1 after its key. */
  listRatePlans(propertyId: string, page?: KeyPage): Promise<RatePlan[]>;
  /** Sets (null: removes) a rate plan's cancellation and no-show policy; 404 for another property's plan. */
  setRatePlanPolicy(
    propertyId: string,
    ratePlanId: string,
    policy: RatePlanPolicy | null,
    keyed?: Keyed,
  ): Promise<RatePlan>;
  /** Sets whether a rate plan prices by occupancy; 404 for another property's plan. */
  setRatePlanOccupancyPricing(propertyId: string, ratePlanId: string, on: boolean, keyed?: Keyed): Promise<RatePlan>;
  /** Sets (null: removes) a rate plan's deposit rule; 404 for another property's plan. */
  setRatePlanDeposit(
    propertyId: string,
    ratePlanId: string,
    deposit: RatePlanDeposit | null,
    keyed?: Keyed,
  ): Promise<RatePlan>;
}

export function createCatalogueService(deps: { transact: Transact; pool: pg.Pool; clock: Clock }): CatalogueService {
  const { transact, clock } = deps;
  const reads = poolQueryable(deps.pool);

  return {
    async createRoomType(propertyId, input, keyed) {
      checkCode("code", input.code);
      const name = checkName("name", input.name);
      if (!Number.isInteger(input.maxOccupancy) || input.maxOccupancy < 1 || input.maxOccupancy > 20)
        throw invalidField("maxOccupancy", "1 to 20");
      const work = transact(async (tx) => {
        await checkCount(tx, "room_types", propertyId, maxRoomTypes, "room types");
        return repo.insertRoomType(
          tx,
          propertyId,
          { id: newId(), code: input.code, name, maxOccupancy: input.maxOccupancy },
          clock.now(),
        );
      }, keyed);
      return conflictOnDuplicate(work, `Room type ${input.code} exists.`);
    },

    listRoomTypes: (propertyId, page) => repo.listRoomTypes(reads, propertyId, page),

    async createRoom(propertyId, input, keyed) {
      const number = checkName("number", input.number, 16);
      const work = transact(async (tx) => {
        const property = await propertyById(tx, propertyId);
        const rt = await requireRoomType(tx, propertyId, input.roomTypeId);
        const room = await repo.insertRoom(
          tx,
          propertyId,
          { id: newId(), number, roomTypeId: rt.id, status: "CLEAN" },
          clock.now(),
        );
        await changeRoomCount(tx, propertyId, rt.id, 1, property.businessDate);
        // No availability.changed hint (setting up a hotel is not news for webhooks), but the ARI feed says it.
        const from = property.businessDate;
        await recordAriChanges(
          tx,
          propertyId,
          [{ reason: "inventory", from, to: addDays(from, maxPriceDays), roomTypes: [rt.code], ratePlans: [] }],
          clock.now(),
        );
        return room;
      }, keyed);
      return conflictOnDuplicate(work, `Room ${number} exists.`);
    },

    listRooms: (propertyId, page) => repo.listRooms(reads, propertyId, page),

    async createRatePlan(propertyId, input, keyed) {
      checkCode("code", input.code);
      const name = checkName("name", input.name);
      if (!boardTypes.includes(input.boardType)) throw invalidField("boardType", `one of ${boardTypes.join(", ")}`);
      if (input.roomTypeIds.length === 0) throw invalidField("roomTypeIds", "at least one room type");
      const work = transact(async (tx) => {
        const ids = [...new Set(input.roomTypeIds)];
        for (const id of ids) await requireRoomType(tx, propertyId, id);
        await checkCount(tx, "rate_plans", propertyId, maxRatePlans, "rate plans");
        const rp = {
          id: newId(),
          code: input.code,
          name,
          boardType: input.boardType,
          roomTypeIds: ids,
          pricesByOccupancy: input.pricesByOccupancy === true,
        };
        await repo.insertRatePlan(tx, propertyId, rp, clock.now());
        return (await repo.findRatePlan(tx, propertyId, rp.id))!;
      }, keyed);
      return conflictOnDuplicate(work, `Rate plan ${input.code} exists.`);
    },

    listRatePlans: (propertyId, page) => repo.listRatePlans(reads, propertyId, page),

    async setRatePlanPolicy(propertyId, ratePlanId, policy, keyed) {
      const id = requireId(ratePlanId, "Rate plan");
      if (policy !== null) checkRatePlanPolicy(policy);
      return transact((tx) => writeRatePlanPolicy(tx, propertyId, id, policy), keyed);
    },

    async setRatePlanOccupancyPricing(propertyId, ratePlanId, on, keyed) {
      const id = requireId(ratePlanId, "Rate plan");
      return transact((tx) => writeRatePlanOccupancyPricing(tx, propertyId, id, on), keyed);
    },

    async setRatePlanDeposit(propertyId, ratePlanId, deposit, keyed) {
      const id = requireId(ratePlanId, "Rate plan");
      if (deposit !== null) checkRatePlanDeposit(deposit);
      return transact((tx) => writeRatePlanDeposit(tx, propertyId, id, deposit), keyed);
    },
  };
}
