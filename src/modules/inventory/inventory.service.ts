import type { KeyPage } from "../../lib/page.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import { recordChange } from "../audit/index.ts";
import type pg from "pg";
import type { Transact, Tx } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { recordEvent, type AvailabilityEventData } from "../events/index.ts";
import { addDays, parseDate, parseRange } from "../../lib/dates.ts";
import { recordAriChanges, type AriReason } from "./ari-log.ts";
import { checkAriWrite, writeAri, type AriWrite } from "./ari-write.ts";
import { setAvailabilityCaps, type SetAvailabilityCapsInput } from "./caps.ts";
import {
  checkRestrictionInput,
  readRatesAndRestrictions,
  ariDays,
  upsertRestrictions,
  type AriDay,
  type SetRestrictionsInput,
} from "./restrictions.ts";
import { changeRoomCount, readAvailability, takeRooms, type RoomTypeAvailability } from "./inventory-days.ts";
import * as repo from "./inventory.repository.ts";
import {
  boardTypes,
  roomStatuses,
  type BoardType,
  type OutOfOrderPeriod,
  type RatePlan,
  type Room,
  type RoomStatus,
  type RoomType,
} from "./inventory.repository.ts";
import { conflictOnDuplicate, poolQueryable, type Queryable } from "../../db/queryable.ts";
import { requireId } from "../../lib/ids.ts";
import { propertyById } from "../properties/index.ts";
import { maxOutOfOrderList, removePeriod, reschedulePeriod, schedulePeriod, type StayInRoom } from "./out-of-order.ts";
import { LazyList } from "../../lib/lazy-list.ts";
import { checkRatePlanDeposit, checkRatePlanPolicy, writeRatePlanDeposit, writeRatePlanPolicy } from "./rate-policy.ts";
import type { RatePlanDeposit, RatePlanPolicy } from "./inventory.repository.ts";
import { concurrencyLimit } from "../../lib/limit.ts";
import {
  dayOccupancyPrices,
  readOccupancyPrices,
  writeRatePlanOccupancyPricing,
  type OccupancyPrice,
} from "./occupancy-prices.ts";

const codePattern = /^[A-Z0-9][A-Z0-9_-]{0,31}$/;
/** Longest price range one SetPrices call writes. */
const maxPriceDays = 731;
/** Longest availability read. */
const maxAvailabilityDays = 366;
/**
 * Most cells (room type x rate plan x day) of one ARI page: a hotel's whole year of 50 room types x 5 rate plans
 * (91,500) is one page; a larger grid is read in pages of whole room types, so what one answer holds is bounded on
 * every face (Connect and gRPC build a page's message whole).
 */
const ariCellsPerPage = 100_000;
/** Rate plans of one property: a room type's year is then at most 91,500 cells, within one ARI page. */
const maxRatePlans = 250;
/** Room types of one property: its availability for a year is then at most 36,600 days in one answer. */
const maxRoomTypes = 100;

/** 409 when the property already has `max` rows of `table` (checked in the transaction that adds one). */
async function checkCount(tx: Tx, table: "room_types" | "rate_plans", propertyId: string, max: number, what: string) {
  if ((await repo.countOfProperty(tx, table, propertyId)) >= max)
    throw new AppError("conflict", `A property has at most ${max} ${what}.`);
}

export interface InventoryDeps {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  /** Which reservation holds a room on some nights (the reservations module answers; app.ts wires it). */
  stayInRoom: StayInRoom;
  /** Where an ARI read that may lag (`AriInput.mayLag`) is read: the replica within its bound, else the primary. */
  replicaReads?: Queryable;
}

interface SetRoomStatusInput {
  roomId: string;
  status: RoomStatus;
  outOfOrderFrom?: string;
  outOfOrderTo?: string;
  reason?: string;
}

export interface InventoryService {
  createRoomType(propertyId: string, input: { code: string; name: string; maxOccupancy: number }): Promise<RoomType>;
  /** By code; with `page`, up to page.limit + 1 after its key (the RPC pages). */
  listRoomTypes(propertyId: string, page?: KeyPage): Promise<RoomType[]>;
  createRoom(propertyId: string, input: { number: string; roomTypeId: string }): Promise<Room>;
  /** By number; with `page`, up to page.limit + 1 after its key. */
  listRooms(propertyId: string, page?: KeyPage): Promise<Room[]>;
  setRoomStatus(propertyId: string, input: SetRoomStatusInput): Promise<Room>;
  /**
   * Out-of-order periods with a day in [from, to) (from: the business date unless given; to: no end unless
   * given), of one room when `roomId`; by first day, room number and id, at most maxOutOfOrderList (with `page`, up
   * to page.limit + 1 after its key).
   */
  listOutOfOrderPeriods(
    propertyId: string,
    input: { roomId?: string; from?: string; to?: string },
    page?: KeyPage,
  ): Promise<OutOfOrderPeriod[]>;
  createOutOfOrderPeriod(
    propertyId: string,
    input: { roomId: string; from: string; to: string; reason?: string },
  ): Promise<OutOfOrderPeriod>;
  updateOutOfOrderPeriod(
    propertyId: string,
    id: string,
    input: { from?: string; to?: string; reason?: string },
  ): Promise<OutOfOrderPeriod>;
  /** Removes a period (one in force ends at the business date); returns what remains on record, if anything. */
  deleteOutOfOrderPeriod(propertyId: string, id: string): Promise<OutOfOrderPeriod | undefined>;
  createRatePlan(
    propertyId: string,
    input: { code: string; name: string; boardType: BoardType; roomTypeIds: string[]; pricesByOccupancy?: boolean },
  ): Promise<RatePlan>;
  /** By code; with `page`, up to page.limit + 1 after its key. */
  listRatePlans(propertyId: string, page?: KeyPage): Promise<RatePlan[]>;
  /** Sets (null: removes) a rate plan's cancellation and no-show policy; 404 for another property's plan. */
  setRatePlanPolicy(propertyId: string, ratePlanId: string, policy: RatePlanPolicy | null): Promise<RatePlan>;
  /** Sets whether a rate plan prices by occupancy; 404 for another property's plan. */
  setRatePlanOccupancyPricing(propertyId: string, ratePlanId: string, on: boolean): Promise<RatePlan>;
  /** Sets (null: removes) a rate plan's deposit rule; 404 for another property's plan. */
  setRatePlanDeposit(propertyId: string, ratePlanId: string, deposit: RatePlanDeposit | null): Promise<RatePlan>;
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
  ): Promise<number>;
  createRoomBlock(
    propertyId: string,
    input: { roomTypeId: string; from: string; to: string; count: number; name?: string },
  ): Promise<string>;
  getAvailability(
    propertyId: string,
    input: { from: string; to: string; roomTypeCodes?: readonly string[] },
  ): Promise<RoomTypeAvailability[]>;
  /** Sets restrictions of rate plans x room types for the chosen weekdays of a range; returns the cells written. */
  setRestrictions(propertyId: string, input: SetRestrictionsInput): Promise<number>;
  /** Sets (-1: lifts) the availability cap of room types for the chosen weekdays of a range; returns the days. */
  setAvailabilityCaps(propertyId: string, input: SetAvailabilityCapsInput): Promise<number>;
  /**
   * Writes a batch of prices and restrictions (ari-write.ts) in one transaction, all or nothing; returns the
   * distinct cells (rate plan x room type x day) written.
   */
  writeAri(propertyId: string, changes: readonly AriWrite[]): Promise<number>;
  /** Availability, prices and restrictions per room type x rate plan x day over [from, to) (at most 366 days). */
  getAri(propertyId: string, input: AriInput): Promise<Ari>;
  /**
   * getAri's answer, read as getAri reads it, with each room type's days built when the list reaches it: what an
   * answer written as it is read holds at a time is the grid's compact form and one room type, not the grid's objects.
   */
  getAriInParts(propertyId: string, input: AriInput): Promise<Ari<LazyList<AriRoomType>>>;
}

interface AriInput {
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

interface AriRoomType {
  id: string;
  code: string;
  ratePlans: { id: string; code: string; days: AriDay[] }[];
}

interface Ari<RoomTypes = AriRoomType[]> {
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

function checkCode(field: string, code: string): string {
  if (!codePattern.test(code))
    throw invalidField(field, "1-32 characters A-Z, 0-9, _ and -, starting with a letter or digit");
  return code;
}

function checkName(field: string, name: string, max = 100): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > max) throw invalidField(field, `1-${max} characters`);
  return trimmed;
}

export async function requireRoomType(q: Queryable, propertyId: string, id: string): Promise<RoomType> {
  const rt = await repo.findRoomType(q, propertyId, requireId(id, "Room type"));
  if (rt === undefined) throw new AppError("not_found", "Room type not found.");
  return rt;
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

export function createInventoryService(deps: InventoryDeps): InventoryService {
  const { transact, clock } = deps;
  const ariReads = concurrencyLimit(1);
  const reads = poolQueryable(deps.pool);

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
      repo.listRoomTypes(q, propertyId),
      repo.listRatePlans(q, propertyId),
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

  /**
   * SetPrices with prices per adults: one ARI write change (the same checks, records and feed entry), its fields
   * named as SetPrices names them (`occupancyPrices[j].adults`, `roomTypeId`).
   */
  async function setOccupancyPrices(propertyId: string, input: Parameters<InventoryService["setPrices"]>[1]) {
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
      return await transact((tx) => writeAri(tx, propertyId, [change], clock.now()));
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      const details = e.details.map((d) => ({ field: rename(d.field), reason: d.reason }));
      const message = details.length > 0 ? details.map((d) => `${d.field}: ${d.reason}`).join("; ") : rename(e.message);
      throw new AppError(e.code, message, { details });
    }
  }

  /** The room (locked: its periods, assignments and check-ins serialise on it), its room type and the business date. */
  async function roomContext(tx: Tx, propertyId: string, roomId: string) {
    const property = await propertyById(tx, propertyId);
    const room = await repo.findRoom(tx, propertyId, roomId, true);
    if (room === undefined) throw new AppError("not_found", "Room not found.");
    const rt = (await repo.findRoomType(tx, propertyId, room.roomTypeId))!;
    return { propertyId, businessDate: property.businessDate, room, roomTypeCode: rt.code, now: clock.now() };
  }

  async function requirePeriod(tx: Tx, propertyId: string, id: string): Promise<OutOfOrderPeriod> {
    const period = await repo.findOutOfOrderPeriod(tx, propertyId, id);
    if (period === undefined) throw new AppError("not_found", "Out-of-order period not found.");
    return period;
  }

  return {
    async createRoomType(propertyId, input) {
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
      });
      return conflictOnDuplicate(work, `Room type ${input.code} exists.`);
    },

    listRoomTypes: (propertyId, page) => repo.listRoomTypes(reads, propertyId, page),

    async createRoom(propertyId, input) {
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
      });
      return conflictOnDuplicate(work, `Room ${number} exists.`);
    },

    listRooms: (propertyId, page) => repo.listRooms(reads, propertyId, page),

    async setRoomStatus(propertyId, input) {
      if (!roomStatuses.includes(input.status)) throw invalidField("status", "CLEAN, DIRTY, INSPECTED or OUT_OF_ORDER");
      const roomId = requireId(input.roomId, "Room");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, roomId);
        if (input.status === "OUT_OF_ORDER") {
          const from = input.outOfOrderFrom ?? "";
          const to = input.outOfOrderTo ?? "";
          const periodId = await schedulePeriod(tx, deps.stayInRoom, ctx, { from, to, reason: input.reason }, [
            "outOfOrderFrom",
            "outOfOrderTo",
          ]);
          recordChange(tx, {
            propertyId,
            entity: "out_of_order",
            entityId: periodId,
            action: "create",
            after: await repo.findOutOfOrderPeriod(tx, propertyId, periodId),
          });
          // A period planned for later leaves today's housekeeping status as it is.
          if (from > ctx.businessDate) return ctx.room;
        } else {
          // Back in service today: the period in force ends at the business date; periods planned for later stay.
          const [current] = await repo.listOutOfOrderPeriods(tx, propertyId, {
            roomId,
            from: ctx.businessDate,
            to: addDays(ctx.businessDate, 1),
            limit: 1,
          });
          if (current !== undefined) await removePeriod(tx, ctx, current);
          if (current !== undefined)
            recordChange(tx, {
              propertyId,
              entity: "out_of_order",
              entityId: current.id,
              action: "end",
              before: current,
              after: await repo.findOutOfOrderPeriod(tx, propertyId, current.id),
            });
        }
        const room = await repo.updateRoomStatus(tx, propertyId, roomId, input.status, ctx.now);
        recordChange(tx, {
          propertyId,
          entity: "room",
          entityId: roomId,
          action: "status",
          before: ctx.room,
          after: room,
        });
        return room;
      });
    },

    async listOutOfOrderPeriods(propertyId, input, page) {
      const roomId = input.roomId === undefined || input.roomId === "" ? null : requireId(input.roomId, "Room");
      const from = input.from === undefined || input.from === "" ? undefined : parseDate("from", input.from);
      const to = input.to === undefined || input.to === "" ? null : parseDate("to", input.to);
      const start = from ?? (await propertyById(reads, propertyId)).businessDate;
      if (to !== null && to <= start)
        throw invalidField("to", `must be after ${from === undefined ? "the business date" : "from"}`);
      if (roomId !== null && (await repo.findRoom(reads, propertyId, roomId)) === undefined)
        throw new AppError("not_found", "Room not found.");
      return repo.listOutOfOrderPeriods(reads, propertyId, {
        roomId,
        from: start,
        to,
        limit: page === undefined ? maxOutOfOrderList : page.limit + 1,
        after: page?.after,
      });
    },

    async createOutOfOrderPeriod(propertyId, input) {
      const roomId = requireId(input.roomId, "Room");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, roomId);
        const id = await schedulePeriod(tx, deps.stayInRoom, ctx, input);
        const period = (await repo.findOutOfOrderPeriod(tx, propertyId, id))!;
        recordChange(tx, { propertyId, entity: "out_of_order", entityId: id, action: "create", after: period });
        return period;
      });
    },

    async updateOutOfOrderPeriod(propertyId, id, input) {
      const periodId = requireId(id, "Out-of-order period");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, (await requirePeriod(tx, propertyId, periodId)).roomId);
        // read again under the room's lock: changes of one room's periods serialise on it
        const before = await requirePeriod(tx, propertyId, periodId);
        await reschedulePeriod(tx, deps.stayInRoom, ctx, before, input);
        const period = (await repo.findOutOfOrderPeriod(tx, propertyId, periodId))!;
        recordChange(tx, {
          propertyId,
          entity: "out_of_order",
          entityId: periodId,
          action: "modify",
          before,
          after: period,
        });
        return period;
      });
    },

    async deleteOutOfOrderPeriod(propertyId, id) {
      const periodId = requireId(id, "Out-of-order period");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, (await requirePeriod(tx, propertyId, periodId)).roomId);
        const before = await requirePeriod(tx, propertyId, periodId);
        await removePeriod(tx, ctx, before);
        const after = await repo.findOutOfOrderPeriod(tx, propertyId, periodId);
        recordChange(tx, { propertyId, entity: "out_of_order", entityId: periodId, action: "delete", before, after });
        return after;
      });
    },

    async createRatePlan(propertyId, input) {
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
      });
      return conflictOnDuplicate(work, `Rate plan ${input.code} exists.`);
    },

    listRatePlans: (propertyId, page) => repo.listRatePlans(reads, propertyId, page),

    async setRatePlanPolicy(propertyId, ratePlanId, policy) {
      const id = requireId(ratePlanId, "Rate plan");
      if (policy !== null) checkRatePlanPolicy(policy);
      return transact((tx) => writeRatePlanPolicy(tx, propertyId, id, policy));
    },

    async setRatePlanOccupancyPricing(propertyId, ratePlanId, on) {
      const id = requireId(ratePlanId, "Rate plan");
      return transact((tx) => writeRatePlanOccupancyPricing(tx, propertyId, id, on));
    },

    async setRatePlanDeposit(propertyId, ratePlanId, deposit) {
      const id = requireId(ratePlanId, "Rate plan");
      if (deposit !== null) checkRatePlanDeposit(deposit);
      return transact((tx) => writeRatePlanDeposit(tx, propertyId, id, deposit));
    },

    async setPrices(propertyId, input) {
      if ((input.occupancyPrices ?? []).length > 0) return setOccupancyPrices(propertyId, input);
      parseRange(input.from, input.to, maxPriceDays);
      if (input.amountMinor < 0n) throw invalidField("amountMinor", "0 or more (minor units)");
      checkMoneyBound("amountMinor", input.amountMinor);
      return transact(async (tx) => {
        const rp = await repo.findRatePlan(tx, propertyId, requireId(input.ratePlanId, "Rate plan"));
        if (rp === undefined) throw new AppError("not_found", "Rate plan not found.");
        const rt = await requireRoomType(tx, propertyId, input.roomTypeId);
        if (!rp.roomTypeIds.includes(rt.id))
          throw invalidField("roomTypeId", "the rate plan does not cover this room type", "validation_failed");
        const days = await repo.upsertPrices(tx, propertyId, rp.id, rt.id, input.from, input.to, input.amountMinor);
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
      });
    },

    async createRoomBlock(propertyId, input) {
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
        await tx.query(
          "insert into room_blocks (id, property_id, room_type_id, name, from_date, to_date, count, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)",
          [id, propertyId, rt.id, (input.name ?? "").slice(0, 200), input.from, input.to, input.count, now],
        );
        await availabilityChanged(tx, propertyId, now, {
          from: input.from,
          to: input.to,
          toExclusive: true,
          roomTypes: [rt.code],
          reason: "room_block",
        });
        return id;
      });
    },

    async getAvailability(propertyId, input) {
      parseRange(input.from, input.to, maxAvailabilityDays);
      return readAvailability(reads, propertyId, input.from, input.to, input.roomTypeCodes ?? []);
    },

    async setRestrictions(propertyId, input) {
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
      });
    },

    async setAvailabilityCaps(propertyId, input) {
      return transact((tx) => setAvailabilityCaps(tx, propertyId, input, clock.now()));
    },

    async writeAri(propertyId, changes) {
      checkAriWrite(changes);
      return transact((tx) => writeAri(tx, propertyId, changes, clock.now()));
    },

    getAriInParts: readAri,

    async getAri(propertyId, input) {
      const ari = await readAri(propertyId, input);
      return { ...ari, roomTypes: ari.roomTypes.toArray() };
    },
  };
}
