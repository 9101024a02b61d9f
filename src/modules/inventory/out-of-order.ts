import type { Tx } from "../../db/transaction.ts";
import type { Queryable } from "../../db/queryable.ts";
import { AppError, invalidField } from "../../errors.ts";
import { maxDate, parseDate, parseRange } from "../../lib/dates.ts";
import { newId } from "../../lib/ids.ts";
import { recordEvent } from "../events/index.ts";
import { recordAriChanges } from "./ari-log.ts";
import { lockRoomDays, releaseRooms, takeRooms } from "./inventory-days.ts";
import type { Room } from "./inventory.repository.ts";
import * as repo from "./out-of-order.repository.ts";
import type { OutOfOrderPeriod } from "./out-of-order.repository.ts";

/**
 * Out-of-order periods: scheduled blocks of one room over [from, to). A period takes the room out of inventory
 * (the `out_of_order` counter of its room type) exactly on its dates; the room's housekeeping status is not part of
 * it. Days before the business date are history: a change or removal moves only the days from the business date on.
 */

/** Longest period, as for prices and blocks. */
const maxOutOfOrderDays = 731;
/** Most periods one list answers. */
export const maxOutOfOrderList = 1000;

/**
 * The code of a reservation holding the room on a night of [from, to) (its room line not checked out), or undefined.
 * Reservations own that answer; the composition root passes their function in.
 */
export type StayInRoom = (
  q: Queryable,
  propertyId: string,
  roomId: string,
  from: string,
  to: string,
) => Promise<string | undefined>;

export interface PeriodInput {
  from: string;
  to: string;
  reason?: string | undefined;
}

function reasonOf(reason: string | undefined): string {
  const text = (reason ?? "").trim();
  if (text.length > 500) throw invalidField("reason", "at most 500 characters");
  return text;
}

/** The availability.changed hint and the ARI feed entry of a period's days (reason "out_of_order"). */
async function periodChanged(tx: Tx, propertyId: string, roomTypeCode: string, from: string, to: string, now: Date) {
  if (from >= to) return;
  await recordEvent(tx, {
    propertyId,
    type: "availability.changed",
    occurredAt: now,
    data: { from, to, toExclusive: true, roomTypes: [roomTypeCode], reason: "out_of_order" },
  });
  await recordAriChanges(
    tx,
    propertyId,
    [{ reason: "out_of_order", from, to, roomTypes: [roomTypeCode], ratePlans: [] }],
    now,
  );
}

/**
 * 409 when the room cannot be out of order on [from, to): another period of it overlaps, or a stay is assigned to it
 * on one of those nights (named, so the desk can move it first).
 */
async function checkRoomFree(
  tx: Tx,
  stayInRoom: StayInRoom,
  propertyId: string,
  room: Room,
  from: string,
  to: string,
  exceptPeriodId: string | null,
): Promise<void> {
  if (from >= to) return;
  const other = (await repo.outOfOrderBetween(tx, propertyId, room.id, from, to)).find((p) => p.id !== exceptPeriodId);
  if (other !== undefined)
    throw new AppError(
      "conflict",
      `Room ${room.number} is already out of order from ${other.fromDate} to ${other.toDate} (period ${other.id}).`,
    );
  const code = await stayInRoom(tx, propertyId, room.id, from, to);
  if (code !== undefined)
    throw new AppError(
      "conflict",
      `Room ${room.number} is assigned to reservation ${code} on a night from ${from} to ${to}; move the stay first.`,
    );
}

/** Schedules a period of a room (locked by the caller) from the business date on; returns its id. */
export async function schedulePeriod(
  tx: Tx,
  stayInRoom: StayInRoom,
  ctx: { propertyId: string; businessDate: string; room: Room; roomTypeCode: string; now: Date },
  input: PeriodInput,
  fields: [string, string] = ["from", "to"],
): Promise<string> {
  parseRange(input.from, input.to, maxOutOfOrderDays, fields);
  const reason = reasonOf(input.reason);
  if (input.from < ctx.businessDate)
    throw invalidField(fields[0], `must not be before the business date ${ctx.businessDate}`, "validation_failed");
  await checkRoomFree(tx, stayInRoom, ctx.propertyId, ctx.room, input.from, input.to, null);
  await takeRooms(tx, {
    propertyId: ctx.propertyId,
    roomTypeId: ctx.room.roomTypeId,
    counter: "out_of_order",
    from: input.from,
    to: input.to,
  });
  const id = newId();
  await repo.insertOutOfOrderPeriod(
    tx,
    ctx.propertyId,
    { id, roomId: ctx.room.id, from: input.from, to: input.to, reason },
    ctx.now,
  );
  await periodChanged(tx, ctx.propertyId, ctx.roomTypeCode, input.from, input.to, ctx.now);
  return id;
}

/**
 * Moves a period to [from, to) (either end may stay). A period that has begun keeps its first day; its end may come
 * no earlier than the business date (that ends it today). Only the days from the business date on move.
 */
export async function reschedulePeriod(
  tx: Tx,
  stayInRoom: StayInRoom,
  ctx: { propertyId: string; businessDate: string; room: Room; roomTypeCode: string; now: Date },
  before: OutOfOrderPeriod,
  input: { from?: string | undefined; to?: string | undefined; reason?: string | undefined },
): Promise<void> {
  const bd = ctx.businessDate;
  const from = input.from === undefined || input.from === "" ? before.from : parseDate("from", input.from);
  const to = input.to === undefined || input.to === "" ? before.to : parseDate("to", input.to);
  parseRange(from, to, maxOutOfOrderDays);
  const reason = input.reason === undefined ? before.reason : reasonOf(input.reason);
  if (before.to <= bd) throw new AppError("conflict", `The period ended on ${before.to}; past periods stay on record.`);
  if (from !== before.from && (before.from < bd || from < bd))
    throw invalidField(
      "from",
      before.from < bd
        ? `the period began on ${before.from}; its first day cannot change`
        : `must not be before the business date ${bd}`,
      "validation_failed",
    );
  if (to < bd) throw invalidField("to", `must not be before the business date ${bd}`, "validation_failed");
  const oldDays = { from: maxDate(before.from, bd), to: before.to };
  const newDays = { from: maxDate(from, bd), to };
  const changed = oldDays.from !== newDays.from || oldDays.to !== newDays.to;
  if (changed) {
    await checkRoomFree(tx, stayInRoom, ctx.propertyId, ctx.room, newDays.from, newDays.to, before.id);
    const span = { from: oldDays.from < newDays.from ? oldDays.from : newDays.from, to: maxDate(oldDays.to, to) };
    await lockRoomDays(tx, ctx.propertyId, [{ roomTypeId: ctx.room.roomTypeId, ...span }]);
    const days = { propertyId: ctx.propertyId, roomTypeId: ctx.room.roomTypeId, counter: "out_of_order" as const };
    await releaseRooms(tx, { ...days, ...oldDays });
    if (newDays.from < newDays.to) await takeRooms(tx, { ...days, ...newDays });
    await periodChanged(tx, ctx.propertyId, ctx.roomTypeCode, span.from, span.to, ctx.now);
  }
  await repo.updateOutOfOrderPeriod(tx, ctx.propertyId, before.id, { from, to, reason }, ctx.now);
}

/**
 * Removes a period: one not begun is deleted, one in force ends at the business date (its past days stay on
 * record). The days from the business date on go back to inventory. A period already over is a 409.
 */
export async function removePeriod(
  tx: Tx,
  ctx: { propertyId: string; businessDate: string; room: Room; roomTypeCode: string; now: Date },
  before: OutOfOrderPeriod,
): Promise<void> {
  const bd = ctx.businessDate;
  if (before.to <= bd) throw new AppError("conflict", `The period ended on ${before.to}; past periods stay on record.`);
  const from = maxDate(before.from, bd);
  await releaseRooms(tx, {
    propertyId: ctx.propertyId,
    roomTypeId: ctx.room.roomTypeId,
    counter: "out_of_order",
    from,
    to: before.to,
  });
  if (before.from >= bd) await repo.deleteOutOfOrderPeriod(tx, ctx.propertyId, before.id);
  else
    await repo.updateOutOfOrderPeriod(
      tx,
      ctx.propertyId,
      before.id,
      { from: before.from, to: bd, reason: before.reason },
      ctx.now,
    );
  await periodChanged(tx, ctx.propertyId, ctx.roomTypeCode, from, before.to, ctx.now);
}
