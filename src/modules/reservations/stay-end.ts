import type { Tx } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import { maxDate } from "../../lib/dates.ts";
import { lockRoomDays, outOfOrderBetween, releaseRooms, takeRooms } from "../inventory/index.ts";
import * as repo from "./reservation.repository.ts";
import type { Reservation } from "./reservation.repository.ts";

/**
 * Ends a stay on the business date when its last room line checks out, moving its departure date there: before the
 * departure date the nights from the business date on go back to inventory (checked out on the arrival day: a day
 * use, every night back); after it, the nights between the departure and the business date are taken, each room
 * line's room free for them (409 naming the reservation, the out-of-order period or the room type and date that
 * stands in the way). Returns the dates whose availability moved, or undefined when none did.
 */
export async function endStay(
  tx: Tx,
  r: Reservation,
  lineId: string,
  businessDate: string,
): Promise<{ from: string; to: string } | undefined> {
  if (businessDate === r.departureDate) return undefined;
  const early = businessDate < r.departureDate;
  const from = early ? maxDate(businessDate, r.arrivalDate) : r.departureDate;
  const to = early ? r.departureDate : businessDate;
  const lines = [...r.rooms].sort((a, b) => (a.roomTypeId < b.roomTypeId ? -1 : a.roomTypeId > b.roomTypeId ? 1 : 0));
  await lockRoomDays(
    tx,
    r.propertyId,
    lines.map((l) => ({ roomTypeId: l.roomTypeId, from, to })),
  );
  for (const l of lines) {
    if (early) {
      // holderId: the nights given back also end this stay's own overbooked nights
      await releaseRooms(tx, {
        propertyId: r.propertyId,
        roomTypeId: l.roomTypeId,
        counter: "sold",
        from,
        to,
        holderId: r.id,
      });
      continue;
    }
    if (l.roomId !== null && (l.checkedOutAt === null || l.id === lineId)) {
      const room = l.roomNumber ?? l.roomId;
      const [ooo] = await outOfOrderBetween(tx, r.propertyId, l.roomId, from, to);
      if (ooo !== undefined)
        throw new AppError(
          "conflict",
          `Late check-out refused: room ${room} is out of order from ${ooo.fromDate} to ${ooo.toDate} (period ${ooo.id}).`,
        );
      const takenBy = await repo.roomTakenBetween(tx, r.propertyId, l.roomId, l.id, from, to);
      if (takenBy !== undefined)
        throw new AppError(
          "conflict",
          `Late check-out refused: room ${room} is assigned to reservation ${takenBy} between ${from} and ${to}.`,
        );
    }
    try {
      await takeRooms(tx, { propertyId: r.propertyId, roomTypeId: l.roomTypeId, counter: "sold", from, to });
    } catch (err) {
      if (err instanceof AppError && (err.code === "no_availability" || err.code === "sold_out"))
        throw new AppError(
          "conflict",
          `Late check-out refused: no room of type ${l.roomTypeCode} is free on every night from ${from} to ${to}.`,
        );
      throw err;
    }
  }
  await tx.query("update reservations set departure_date = $3 where property_id = $1 and id = $2", [
    r.propertyId,
    r.id,
    businessDate,
  ]);
  return { from, to };
}
