import type { Tx } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import { addDays } from "../../lib/dates.ts";
import { findRoom, lockRoomDays, outOfOrderBetween, takeRooms } from "../inventory/index.ts";
import { propertyById } from "../properties/index.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";
import { availabilityEvents, reservationEvent } from "./reservation.events.ts";
import { auditReservation, finishChange, requireReservation, type Actor } from "./common.ts";

/**
 * Brings a NO_SHOW back as GUARANTEED while the business date is at most the day after its arrival (the guest came
 * late in the night the audit marked them, or the next day) and its departure is still ahead: every night of the
 * stay is taken again (409 sold_out when a room type is full on one of them). A room assigned before stays when it
 * is still free and in order, else the line loses it (the front desk assigns another at check-in).
 */
export async function reinstateInTx(tx: Tx, actor: Actor, reservationId: string, now: Date): Promise<Reservation> {
  const before = await requireReservation(tx, actor.propertyId, reservationId, true);
  if (before.status !== "NO_SHOW")
    throw new AppError("invalid_transition", `Only a NO_SHOW reservation is reinstated; this one is ${before.status}.`);
  const { businessDate } = await propertyById(tx, actor.propertyId);
  if (businessDate > addDays(before.arrivalDate, 1) || businessDate >= before.departureDate)
    throw new AppError(
      "conflict",
      `A no-show is reinstated only on its arrival date or the day after, before departure (business date ${businessDate}).`,
    );
  const lines = [...before.rooms].sort((a, b) =>
    a.roomTypeId < b.roomTypeId ? -1 : a.roomTypeId > b.roomTypeId ? 1 : 0,
  );
  const stay = { from: before.arrivalDate, to: before.departureDate };
  await lockRoomDays(
    tx,
    actor.propertyId,
    lines.map((l) => ({ roomTypeId: l.roomTypeId, ...stay })),
  );
  for (const l of lines)
    await takeRooms(tx, { propertyId: actor.propertyId, roomTypeId: l.roomTypeId, counter: "sold", ...stay });
  for (const l of lines) {
    if (l.roomId === null) continue;
    await findRoom(tx, actor.propertyId, l.roomId, true);
    const takenBy = await repo.roomTakenBetween(tx, actor.propertyId, l.roomId, l.id, stay.from, stay.to);
    const [ooo] = await outOfOrderBetween(tx, actor.propertyId, l.roomId, stay.from, stay.to);
    if (takenBy !== undefined || ooo !== undefined)
      await tx.query("update reservation_rooms set room_id = null where property_id = $1 and id = $2", [
        actor.propertyId,
        l.id,
      ]);
  }
  await tx.query(
    "update reservations set status = 'GUARANTEED', updated_at = $3, option_until = null where property_id = $1 and id = $2",
    [actor.propertyId, before.id, now],
  );
  const r = await requireReservation(tx, actor.propertyId, before.id, false);
  auditReservation(tx, "reinstate", before, r);
  return finishChange(tx, r, [
    reservationEvent("reservation.updated", r, now),
    ...availabilityEvents(
      actor.propertyId,
      stay.from,
      stay.to,
      r.rooms.map((l) => l.roomTypeCode),
      now,
    ),
  ]);
}
