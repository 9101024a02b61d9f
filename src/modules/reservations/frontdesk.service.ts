import type { Transact, Tx } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import {
  findRatePlan,
  findRoom,
  findRoomType,
  lockRoomDays,
  nightlyPrices,
  outOfOrderBetween,
  releaseRooms,
  takeRooms,
  updateRoomStatus,
} from "../inventory/index.ts";
import { daysBetween } from "../../lib/dates.ts";
import { propertyById } from "../properties/index.ts";
import { isUuid, newId, requireId } from "../../lib/ids.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";
import { availabilityEvents, reservationEvent, roomLineEvent } from "./reservation.events.ts";
import { assertTransition, holdsInventory } from "./transitions.ts";
import { auditReservation, finishChange, requireReservation, type Actor } from "./common.ts";
import { endStay } from "./stay-end.ts";
import { reinstateInTx } from "./no-show.ts";
import { postNoShowFee, type PostFee } from "./policy-fees.ts";
import {
  checkLateCheckOutRule,
  postLateCheckOutFee,
  writeLateCheckOutRule,
  type LateCheckOutRule,
} from "./late-checkout.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** A check-in or check-out of one room line, as the line's occupants' reporting needs it. */
export interface StayMovement {
  propertyId: string;
  reservationId: string;
  reservationCode: string;
  reservationRoomId: string;
  roomNumber: string;
  arrivalDate: string;
  departureDate: string;
  /** The property's business date at the movement. */
  businessDate: string;
  movement: "check_in" | "check_out";
  at: Date;
}

/** Runs inside the movement's transaction, before its last statement: a throw rolls the movement back. */
export type OnStayMovement = (tx: Tx, m: StayMovement) => Promise<void>;

/** The city ledger as a check-out uses it, in the check-out's transaction (wired in app.ts). */
export interface SettleAtCheckOut {
  /** 404 not_found unless the account is the property's; called before the check-out changes anything. */
  requireAccount(tx: Tx, propertyId: string, accountId: string): Promise<void>;
  /** Settles every folio of the reservation with an open balance to the account (422 beyond its credit limit). */
  settleReservation(
    tx: Tx,
    propertyId: string,
    actor: string,
    input: { reservationId: string; accountId: string },
  ): Promise<unknown>;
}

function movementOf(
  r: Reservation,
  lineId: string,
  businessDate: string,
  movement: StayMovement["movement"],
  at: Date,
) {
  const line = lineOf(r, lineId);
  return {
    propertyId: r.propertyId,
    reservationId: r.id,
    reservationCode: r.code,
    reservationRoomId: line.id,
    roomNumber: line.roomNumber ?? "",
    arrivalDate: r.arrivalDate,
    departureDate: r.departureDate,
    businessDate,
    movement,
    at,
  };
}

export interface FrontDesk {
  /** Assigns a room to a room line (inside a caller's transaction; used by create and check-in). */
  assignInTx(tx: Tx, propertyId: string, reservationId: string, lineId: string, roomId: string): Promise<void>;
  assignRoom(actor: Actor, reservationId: string, lineId: string, roomId: string): Promise<Reservation>;
  checkIn(actor: Actor, reservationId: string, lineId: string, roomId?: string): Promise<Reservation>;
  /**
   * `settleToAccountId`: the reservation's open folio balances go to that city-ledger account in the check-out's
   * transaction (after any late check-out fee); beyond the account's credit limit nothing changes (422).
   */
  checkOut(
    actor: Actor,
    reservationId: string,
    lineId: string,
    opts?: { settleToAccountId?: string },
  ): Promise<Reservation>;
  /** Moves an in-house room line to another room from the business date on (see MoveRoom in reservation.proto). */
  moveRoom(
    actor: Actor,
    reservationId: string,
    lineId: string,
    roomId: string,
    opts?: { reprice?: boolean },
  ): Promise<Reservation>;
  /** Night audit: an arrival that did not come. Releases its rooms. */
  markNoShow(actor: Actor, reservationId: string): Promise<Reservation>;
  /**
   * The same inside the night audit's transaction (its `MarkNoShow`). Takes the property's change-sequence
   * lock until that transaction commits.
   */
  markNoShowInTx(tx: Tx, propertyId: string, reservationId: string, by?: string): Promise<void>;
  /** Sets (null: removes) the property's late check-out rule. */
  setLateCheckOutRule(
    propertyId: string,
    rule: LateCheckOutRule | null,
    keyed?: Keyed,
  ): Promise<LateCheckOutRule | null>;
  /** A no-show comes after all (see ReinstateReservation in reservation.proto). */
  reinstate(actor: Actor, reservationId: string): Promise<Reservation>;
}

function lineOf(r: Reservation, lineId: string) {
  const line = r.rooms.find((l) => l.id === lineId);
  if (line === undefined) throw new AppError("not_found", "Room line not found.");
  return line;
}

export function createFrontDesk(deps: {
  transact: Transact;
  clock: Clock;
  postFee?: PostFee;
  onStayMovement?: OnStayMovement;
  settleAtCheckOut?: SettleAtCheckOut;
}): FrontDesk {
  const { transact, clock } = deps;

  async function assignInTx(
    tx: Tx,
    propertyId: string,
    reservationId: string,
    lineId: string,
    roomId: string,
  ): Promise<void> {
    const r = await requireReservation(tx, propertyId, reservationId, false);
    const line = lineOf(r, lineId);
    if (line.checkedInAt !== null && line.roomId !== roomId)
      throw new AppError("conflict", "The room line is checked in; its room cannot change.");
    // The room row lock serialises every assignment and check-in of this room.
    const room = await findRoom(tx, propertyId, requireId(roomId, "Room"), true);
    if (room === undefined) throw new AppError("not_found", "Room not found.");
    if (room.roomTypeId !== line.roomTypeId)
      throw invalidField("roomId", "the room is not of the room line's room type", "validation_failed");
    if (room.status === "OUT_OF_ORDER") throw new AppError("conflict", `Room ${room.number} is out of order.`);
    const [ooo] = await outOfOrderBetween(tx, propertyId, room.id, r.arrivalDate, r.departureDate);
    if (ooo !== undefined)
      throw new AppError(
        "conflict",
        `Room ${room.number} is out of order from ${ooo.fromDate} to ${ooo.toDate} (period ${ooo.id}), during the stay.`,
      );
    const takenBy = await repo.roomTakenBetween(tx, propertyId, room.id, line.id, r.arrivalDate, r.departureDate);
    if (takenBy !== undefined)
      throw new AppError("conflict", `Room ${room.number} is assigned to reservation ${takenBy} on overlapping dates.`);
    await tx.query("update reservation_rooms set room_id = $3 where property_id = $1 and id = $2", [
      propertyId,
      line.id,
      room.id,
    ]);
  }

  async function markNoShowInTx(tx: Tx, propertyId: string, reservationId: string, by = "system"): Promise<void> {
    const now = clock.now();
    const before = await requireReservation(tx, propertyId, reservationId, true);
    assertTransition(before.status, "NO_SHOW");
    for (const l of [...before.rooms].sort((a, b) => (a.roomTypeId < b.roomTypeId ? -1 : 1))) {
      await releaseRooms(tx, {
        propertyId,
        roomTypeId: l.roomTypeId,
        counter: "sold",
        from: before.arrivalDate,
        to: before.departureDate,
        holderId: before.id,
      });
    }
    await tx.query(
      "update reservations set status = 'NO_SHOW', updated_at = $3, option_until = null where property_id = $1 and id = $2",
      [propertyId, before.id, now],
    );
    await postNoShowFee(tx, deps.postFee, before, by);
    const r = await requireReservation(tx, propertyId, before.id, false);
    auditReservation(tx, "no_show", before, r);
    // The caller's transaction goes on (the night audit marks several and advances the date): not its last statement.
    await finishChange(
      tx,
      r,
      [
        reservationEvent("reservation.updated", r, now),
        ...availabilityEvents(
          propertyId,
          r.arrivalDate,
          r.departureDate,
          r.rooms.map((l) => l.roomTypeCode),
          now,
        ),
      ],
      { last: false },
    );
  }

  async function writable(tx: Tx, actor: Actor, reservationId: string): Promise<Reservation> {
    const r = await requireReservation(tx, actor.propertyId, reservationId, true);
    if (!holdsInventory.has(r.status))
      throw new AppError("invalid_transition", `A ${r.status} reservation cannot be changed.`);
    return r;
  }

  async function touch(tx: Tx, actor: Actor, id: string, now: Date, status?: string): Promise<Reservation> {
    if (status === undefined)
      await tx.query("update reservations set updated_at = $3 where property_id = $1 and id = $2", [
        actor.propertyId,
        id,
        now,
      ]);
    else
      // a status other than TENTATIVE (in house, checked out) ends an option
      await tx.query(
        `update reservations set status = $4, updated_at = $3, option_until = case when $4 = 'TENTATIVE' then option_until end
          where property_id = $1 and id = $2`,
        [actor.propertyId, id, now, status],
      );
    return requireReservation(tx, actor.propertyId, id, false);
  }

  return {
    assignInTx,

    assignRoom: (actor, reservationId, lineId, roomId) =>
      transact(async (tx) => {
        const now = clock.now();
        const before = await writable(tx, actor, reservationId);
        await assignInTx(tx, actor.propertyId, before.id, lineId, roomId);
        const r = await touch(tx, actor, before.id, now);
        auditReservation(tx, "assign_room", before, r);
        return finishChange(tx, r, [reservationEvent("reservation.updated", r, now)]);
      }, actor.keyed),

    checkIn: (actor, reservationId, lineId, roomId) =>
      transact(async (tx) => {
        const now = clock.now();
        const property = await propertyById(tx, actor.propertyId);
        const before = await writable(tx, actor, reservationId);
        const line = lineOf(before, lineId);
        if (line.checkedInAt !== null) throw new AppError("conflict", "The room line is already checked in.");
        if (property.businessDate < before.arrivalDate)
          throw new AppError(
            "conflict",
            `Check-in opens on the arrival date ${before.arrivalDate} (business date ${property.businessDate}).`,
          );
        if (property.businessDate >= before.departureDate)
          throw new AppError("conflict", "The stay has ended; check-in is closed.");
        const targetRoom = roomId ?? line.roomId;
        if (targetRoom === null) throw invalidField("roomId", "assign a room before check-in", "validation_failed");
        await assignInTx(tx, actor.propertyId, before.id, line.id, targetRoom);
        const room = (await findRoom(tx, actor.propertyId, targetRoom, true))!;
        if (room.status !== "CLEAN" && room.status !== "INSPECTED")
          throw new AppError("conflict", `The room is ${room.status}; it must be CLEAN or INSPECTED.`);
        if (await repo.roomOccupied(tx, actor.propertyId, room.id, line.id))
          throw new AppError("conflict", "Another guest is in this room.");
        if (before.status !== "IN_HOUSE") assertTransition(before.status, "IN_HOUSE");
        await tx.query("update reservation_rooms set checked_in_at = $3 where property_id = $1 and id = $2", [
          actor.propertyId,
          line.id,
          now,
        ]);
        const r = await touch(tx, actor, before.id, now, "IN_HOUSE");
        auditReservation(tx, "check_in", before, r);
        await deps.onStayMovement?.(tx, movementOf(r, line.id, property.businessDate, "check_in", now));
        return finishChange(tx, r, [
          roomLineEvent("guest.checked_in", r, lineOf(r, line.id), now),
          reservationEvent("reservation.updated", r, now),
        ]);
      }, actor.keyed),

    checkOut: (actor, reservationId, lineId, opts = {}) =>
      transact(async (tx) => {
        const now = clock.now();
        const accountId = opts.settleToAccountId ?? "";
        if (accountId !== "") {
          if (!isUuid(accountId)) throw invalidField("settleToAccountId", "must be a UUID");
          if (deps.settleAtCheckOut === undefined) throw new AppError("unavailable", "No city ledger is configured.");
          await deps.settleAtCheckOut.requireAccount(tx, actor.propertyId, accountId);
        }
        const property = await propertyById(tx, actor.propertyId);
        const before = await requireReservation(tx, actor.propertyId, reservationId, true);
        const line = lineOf(before, lineId);
        if (before.status !== "IN_HOUSE" || line.checkedInAt === null)
          throw new AppError("invalid_transition", "The room line is not checked in.");
        if (line.checkedOutAt !== null)
          throw new AppError("invalid_transition", "The room line is already checked out.");
        const stillIn = before.rooms.some((l) => l.id !== line.id && l.checkedInAt !== null && l.checkedOutAt === null);
        // The last room line out ends the stay on the business date: an early check-out gives the nights from then
        // on back, a late one (past the departure date) takes the nights it stayed beyond it.
        const moved = stillIn ? undefined : await endStay(tx, before, line.id, property.businessDate);
        await postLateCheckOutFee(tx, deps.postFee, before, line, property.businessDate, now, actor.by ?? "system");
        if (accountId !== "")
          await deps.settleAtCheckOut!.settleReservation(tx, actor.propertyId, actor.by ?? "system", {
            reservationId: before.id,
            accountId,
          });
        await tx.query("update reservation_rooms set checked_out_at = $3 where property_id = $1 and id = $2", [
          actor.propertyId,
          line.id,
          now,
        ]);
        if (line.roomId !== null) await updateRoomStatus(tx, actor.propertyId, line.roomId, "DIRTY", now);
        const r = await touch(tx, actor, before.id, now, stillIn ? undefined : "CHECKED_OUT");
        auditReservation(tx, "check_out", before, r);
        await deps.onStayMovement?.(tx, movementOf(r, line.id, property.businessDate, "check_out", now));
        return finishChange(tx, r, [
          roomLineEvent("guest.checked_out", r, lineOf(r, line.id), now),
          reservationEvent("reservation.updated", r, now),
          ...(moved === undefined
            ? []
            : availabilityEvents(
                actor.propertyId,
                moved.from,
                moved.to,
                r.rooms.map((l) => l.roomTypeCode),
                now,
              )),
        ]);
      }, actor.keyed),

    moveRoom: (actor, reservationId, lineId, roomId, opts = {}) =>
      transact(async (tx) => {
        const now = clock.now();
        const property = await propertyById(tx, actor.propertyId);
        const before = await requireReservation(tx, actor.propertyId, reservationId, true);
        const line = lineOf(before, lineId);
        if (before.status !== "IN_HOUSE" || line.checkedInAt === null || line.checkedOutAt !== null)
          throw new AppError("invalid_transition", "Only an in-house room line moves; before check-in, assign a room.");
        const from = property.businessDate;
        const to = before.departureDate;
        if (from >= to) throw new AppError("conflict", "The stay ends today; check the guest out instead.");
        // Both rooms locked in one order: two guests swapping rooms at once must not lock them crosswise.
        const targetId = requireId(roomId, "Room").toLowerCase();
        const locked = new Map<string, Awaited<ReturnType<typeof findRoom>>>();
        for (const id of [...new Set([targetId, line.roomId ?? targetId])].sort())
          locked.set(id, await findRoom(tx, actor.propertyId, id, true));
        const target = locked.get(targetId);
        if (target === undefined) throw new AppError("not_found", "Room not found.");
        if (target.id === line.roomId) throw invalidField("roomId", "is the room the guest is in", "validation_failed");
        if (target.status !== "CLEAN" && target.status !== "INSPECTED")
          throw new AppError("conflict", `Room ${target.number} is ${target.status}; it must be CLEAN or INSPECTED.`);
        const [ooo] = await outOfOrderBetween(tx, actor.propertyId, target.id, from, to);
        if (ooo !== undefined)
          throw new AppError(
            "conflict",
            `Room ${target.number} is out of order from ${ooo.fromDate} to ${ooo.toDate} (period ${ooo.id}).`,
          );
        if (await repo.roomOccupied(tx, actor.propertyId, target.id, line.id))
          throw new AppError("conflict", `Another guest is in room ${target.number}.`);
        const takenBy = await repo.roomTakenBetween(tx, actor.propertyId, target.id, line.id, from, to);
        if (takenBy !== undefined)
          throw new AppError(
            "conflict",
            `Room ${target.number} is assigned to reservation ${takenBy} between ${from} and ${to}.`,
          );
        const otherType = target.roomTypeId !== line.roomTypeId;
        let nightly = line.nightlyMinor;
        let newTypeCode = line.roomTypeCode;
        if (otherType) {
          const rp = (await findRatePlan(tx, actor.propertyId, line.ratePlanId))!;
          if (!rp.roomTypeIds.includes(target.roomTypeId))
            throw invalidField("roomId", `rate plan ${rp.code} does not cover the room's type`, "validation_failed");
          const stays = [line.roomTypeId, target.roomTypeId].sort().map((roomTypeId) => ({ roomTypeId, from, to }));
          await lockRoomDays(tx, actor.propertyId, stays);
          const days = { propertyId: actor.propertyId, counter: "sold" as const, from, to };
          await releaseRooms(tx, { ...days, roomTypeId: line.roomTypeId, holderId: before.id });
          await takeRooms(tx, { ...days, roomTypeId: target.roomTypeId });
          // the nights before `from` stay sold on the old type: the move says so (see heldNightsSql)
          await tx.query(
            `insert into reservation_room_moves (id, property_id, room_line_id, moved_on, from_room_type_id, to_room_type_id, created_at)
             values ($1, $2, $3, $4, $5, $6, $7)`,
            [newId(), actor.propertyId, line.id, from, line.roomTypeId, target.roomTypeId, now],
          );
          newTypeCode = (await findRoomType(tx, actor.propertyId, target.roomTypeId))!.code;
          if (opts.reprice === true) {
            const prices = await nightlyPrices(tx, actor.propertyId, rp.id, target.roomTypeId, from, to, line.adults);
            if (prices.length !== daysBetween(from, to))
              throw invalidField(
                "reprice",
                "the new room's type has no price for every remaining night",
                "validation_failed",
              );
            const kept = line.nightlyMinor.slice(0, daysBetween(before.arrivalDate, from));
            nightly = [...kept, ...prices.map((p) => p.amountMinor)];
          }
        }
        const lineTotal = nightly.reduce((a, b) => a + b, 0n);
        await tx.query(
          `update reservation_rooms set room_id = $3, room_type_id = $4, nightly_minor = $5::bigint[], total_minor = $6
            where property_id = $1 and id = $2`,
          [actor.propertyId, line.id, target.id, target.roomTypeId, nightly.map(String), lineTotal.toString()],
        );
        if (lineTotal !== line.totalMinor)
          await tx.query("update reservations set total_minor = $3 where property_id = $1 and id = $2", [
            actor.propertyId,
            before.id,
            (before.totalMinor - line.totalMinor + lineTotal).toString(),
          ]);
        if (line.roomId !== null) await updateRoomStatus(tx, actor.propertyId, line.roomId, "DIRTY", now);
        const r = await touch(tx, actor, before.id, now);
        auditReservation(tx, "move", before, r);
        return finishChange(tx, r, [
          reservationEvent("reservation.updated", r, now),
          ...(otherType ? availabilityEvents(actor.propertyId, from, to, [line.roomTypeCode, newTypeCode], now) : []),
        ]);
      }, actor.keyed),

    markNoShowInTx,
    async setLateCheckOutRule(propertyId, rule, keyed) {
      if (rule !== null) checkLateCheckOutRule(rule);
      await transact((tx) => writeLateCheckOutRule(tx, propertyId, rule, clock.now()), keyed);
      return rule;
    },
    reinstate: (actor, reservationId) =>
      transact((tx) => reinstateInTx(tx, actor, reservationId, clock.now()), actor.keyed),
    markNoShow: (actor, reservationId) =>
      transact(async (tx) => {
        await markNoShowInTx(tx, actor.propertyId, reservationId, actor.by);
        return requireReservation(tx, actor.propertyId, reservationId, false);
      }),
  };
}
