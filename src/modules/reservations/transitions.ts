import { AppError, invalidField } from "../../errors.ts";

export const reservationStatuses = [
  "TENTATIVE",
  "GUARANTEED",
  "IN_HOUSE",
  "CHECKED_OUT",
  "NO_SHOW",
  "CANCELLED",
] as const;
export type ReservationStatus = (typeof reservationStatuses)[number];

export const reservationSources = ["DIRECT", "MOBILE", "PANEL", "CHANNEL", "API"] as const;
export type ReservationSource = (typeof reservationSources)[number];

/** The sources staff book with: a CHANNEL booking comes only from a channel manager (the connectivity API). */
export const staffSources: readonly ReservationSource[] = reservationSources.filter((s) => s !== "CHANNEL");

/** 422 on `source` when staff ask for a source they may not book with (CHANNEL). */
export function checkStaffSource(source: string): void {
  if (!(staffSources as readonly string[]).includes(source))
    throw invalidField(
      "source",
      source === "CHANNEL"
        ? `CHANNEL bookings come only from channel managers through the connectivity API; use ${staffSources.join(", ")}`
        : `must be one of ${staffSources.join(", ")}`,
      "validation_failed",
    );
}

/**
 * Every allowed status change (the same table is in reservation.proto). The spec's state table moves ANY
 * reservation state to CANCELLED (cancelledAt set, reservation.cancelled emitted): an in-house or checked-out
 * stay too (a channel cancels what it sold); the nights still ahead go back to inventory.
 */
const transitions: Readonly<Record<ReservationStatus, readonly ReservationStatus[]>> = {
  TENTATIVE: ["GUARANTEED", "IN_HOUSE", "NO_SHOW", "CANCELLED"],
  GUARANTEED: ["TENTATIVE", "IN_HOUSE", "NO_SHOW", "CANCELLED"],
  IN_HOUSE: ["CHECKED_OUT", "CANCELLED"],
  CHECKED_OUT: ["CANCELLED"],
  NO_SHOW: ["GUARANTEED", "CANCELLED"],
  CANCELLED: [],
};

/** Statuses in which a reservation holds its rooms in inventory. */
export const holdsInventory: ReadonlySet<ReservationStatus> = new Set(["TENTATIVE", "GUARANTEED", "IN_HOUSE"]);

function canTransition(from: ReservationStatus, to: ReservationStatus): boolean {
  return transitions[from].includes(to);
}

export function assertTransition(from: ReservationStatus, to: ReservationStatus): void {
  if (!canTransition(from, to)) throw new AppError("invalid_transition", `A ${from} reservation cannot become ${to}.`);
}
