import type { Tx } from "../../db/transaction.ts";
import { alertStaff } from "../notifications/index.ts";
import type { Reservation } from "./reservation.repository.ts";

/** The permission that lets staff overbook, and whose holders are told of every overbooking. */
const overbookPermission = "reservations.overbook";

/**
 * "SUITE 1 room on 2027-06-01, 2027-06-02": the short nights grouped by room type and rooms short, dates in order.
 */
function describeShortfall(nights: Reservation["overbookedNights"]): string {
  const groups = new Map<string, string[]>();
  for (const n of nights) {
    const key = `${n.roomTypeCode} ${n.rooms} room${n.rooms === 1 ? "" : "s"}`;
    groups.set(key, [...(groups.get(key) ?? []), n.date]);
  }
  return [...groups].map(([key, dates]) => `${key} on ${dates.join(", ")}`).join("; ");
}

/**
 * An overbooking was accepted: the property's staff who hold reservations.overbook get a panel notification and an
 * e-mail, in the change's transaction. The text names the booking, never the guest.
 */
export async function alertOverbooking(tx: Tx, r: Reservation, now: Date): Promise<void> {
  if (r.overbookedNights.length === 0) return;
  const origin =
    r.channel !== null
      ? `${r.channel} booking ${r.code}${r.externalReference === null ? "" : ` (reference ${r.externalReference})`}`
      : `Booking ${r.code}`;
  await alertStaff(
    tx,
    {
      propertyId: r.propertyId,
      permission: overbookPermission,
      kind: "reservation.overbooked",
      title: `Overbooking: ${r.code}`,
      body: `${origin} was accepted beyond the available rooms, short ${describeShortfall(r.overbookedNights)}. Free a room, move a stay or arrange a walk.`,
      data: {
        reservationId: r.id,
        reservationCode: r.code,
        overbookedNights: r.overbookedNights.map((n) => ({
          date: n.date,
          roomTypeCode: n.roomTypeCode,
          rooms: n.rooms,
        })),
      },
    },
    now,
  );
}
