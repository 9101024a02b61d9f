import type pg from "pg";
import type { KeyPage } from "../../lib/page.ts";
import { recordChange } from "../audit/index.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { poolQueryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { addDays, parseDate } from "../../lib/dates.ts";
import { requireId } from "../../lib/ids.ts";
import { propertyById } from "../properties/index.ts";
import * as repo from "./inventory.repository.ts";
import { roomStatuses, type Room, type RoomStatus } from "./inventory.repository.ts";
import { maxOutOfOrderList, removePeriod, reschedulePeriod, schedulePeriod, type StayInRoom } from "./out-of-order.ts";
import { findOutOfOrderPeriod, listOutOfOrderPeriods, type OutOfOrderPeriod } from "./out-of-order.repository.ts";
import type { Keyed } from "../../db/held-transaction.ts";

interface SetRoomStatusInput {
  roomId: string;
  status: RoomStatus;
  outOfOrderFrom?: string;
  outOfOrderTo?: string;
  reason?: string;
}

/** Rooms in and out of service: housekeeping status and out-of-order periods. */
export interface RoomStatusService {
  setRoomStatus(propertyId: string, input: SetRoomStatusInput, keyed?: Keyed): Promise<Room>;
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
    keyed?: Keyed,
  ): Promise<OutOfOrderPeriod>;
  updateOutOfOrderPeriod(
    propertyId: string,
    id: string,
    input: { from?: string; to?: string; reason?: string },
    keyed?: Keyed,
  ): Promise<OutOfOrderPeriod>;
  /** Removes a period (one in force ends at the business date); returns what remains on record, if anything. */
  deleteOutOfOrderPeriod(propertyId: string, id: string, keyed?: Keyed): Promise<OutOfOrderPeriod | undefined>;
}

export function createRoomStatusService(deps: {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  stayInRoom: StayInRoom;
}): RoomStatusService {
  const { transact, clock } = deps;
  const reads = poolQueryable(deps.pool);

  /** The room (locked: its periods, assignments and check-ins serialise on it), its room type and the business date. */
  async function roomContext(tx: Tx, propertyId: string, roomId: string) {
    const property = await propertyById(tx, propertyId);
    const room = await repo.findRoom(tx, propertyId, roomId, true);
    if (room === undefined) throw new AppError("not_found", "Room not found.");
    const rt = (await repo.findRoomType(tx, propertyId, room.roomTypeId))!;
    return { propertyId, businessDate: property.businessDate, room, roomTypeCode: rt.code, now: clock.now() };
  }

  async function requirePeriod(tx: Tx, propertyId: string, id: string): Promise<OutOfOrderPeriod> {
    const period = await findOutOfOrderPeriod(tx, propertyId, id);
    if (period === undefined) throw new AppError("not_found", "Out-of-order period not found.");
    return period;
  }

  return {
    async setRoomStatus(propertyId, input, keyed) {
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
            after: await findOutOfOrderPeriod(tx, propertyId, periodId),
          });
          // A period planned for later leaves today's housekeeping status as it is.
          if (from > ctx.businessDate) return ctx.room;
        } else {
          // Back in service today: the period in force ends at the business date; periods planned for later stay.
          const [current] = await listOutOfOrderPeriods(tx, propertyId, {
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
              after: await findOutOfOrderPeriod(tx, propertyId, current.id),
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
      }, keyed);
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
      return listOutOfOrderPeriods(reads, propertyId, {
        roomId,
        from: start,
        to,
        limit: page === undefined ? maxOutOfOrderList : page.limit + 1,
        after: page?.after,
      });
    },

    async createOutOfOrderPeriod(propertyId, input, keyed) {
      const roomId = requireId(input.roomId, "Room");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, roomId);
        const id = await schedulePeriod(tx, deps.stayInRoom, ctx, input);
        const period = (await findOutOfOrderPeriod(tx, propertyId, id))!;
        recordChange(tx, { propertyId, entity: "out_of_order", entityId: id, action: "create", after: period });
        return period;
      }, keyed);
    },

    async updateOutOfOrderPeriod(propertyId, id, input, keyed) {
      const periodId = requireId(id, "Out-of-order period");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, (await requirePeriod(tx, propertyId, periodId)).roomId);
        // read again under the room's lock: changes of one room's periods serialise on it
        const before = await requirePeriod(tx, propertyId, periodId);
        await reschedulePeriod(tx, deps.stayInRoom, ctx, before, input);
        const period = (await findOutOfOrderPeriod(tx, propertyId, periodId))!;
        recordChange(tx, {
          propertyId,
          entity: "out_of_order",
          entityId: periodId,
          action: "modify",
          before,
          after: period,
        });
        return period;
      }, keyed);
    },

    async deleteOutOfOrderPeriod(propertyId, id, keyed) {
      const periodId = requireId(id, "Out-of-order period");
      return transact(async (tx) => {
        const ctx = await roomContext(tx, propertyId, (await requirePeriod(tx, propertyId, periodId)).roomId);
        const before = await requirePeriod(tx, propertyId, periodId);
        await removePeriod(tx, ctx, before);
        const after = await findOutOfOrderPeriod(tx, propertyId, periodId);
        recordChange(tx, { propertyId, entity: "out_of_order", entityId: periodId, action: "delete", before, after });
        return after;
      }, keyed);
    },
  };
}
