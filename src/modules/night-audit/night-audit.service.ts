import { AppError } from "../../errors.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { parseDate } from "../../lib/dates.ts";
import type { FolioService } from "../folio/index.ts";
import * as repo from "./night-audit.repository.ts";

export type CheckStatus = "ok" | "warning" | "blocking";
export type CheckId =
  | "arrivals_not_checked_in"
  | "departures_not_checked_out"
  | "unbalanced_departed_folios"
  | "rooms_without_housekeeping_status";

export interface NightAuditCheck {
  id: CheckId;
  status: CheckStatus;
  message: string;
  count: number;
}

export interface NightAuditChecks {
  businessDate: string;
  checks: NightAuditCheck[];
  canRun: boolean;
}

export interface NightAuditSummary {
  roomChargesPosted: number;
  roomChargesMinor: bigint;
  noShowsMarked: number;
  currency: string;
  amountScale: number;
  checks: NightAuditCheck[];
}

export interface NightAuditResult {
  previousBusinessDate: string;
  businessDate: string;
  summary: NightAuditSummary;
}

/**
 * Marks a reservation as a no-show inside the caller's transaction, through the reservations service so
 * that inventory is released and the reservation events are written. Wired in app.ts.
 */
export type MarkNoShow = (tx: Tx, propertyId: string, reservationId: string) => Promise<void>;

export interface NightAuditDeps {
  transact: Transact;
  clock: Clock;
  folios: FolioService;
  markNoShow: MarkNoShow;
}

export interface NightAuditService {
  getChecks(propertyId: string): Promise<NightAuditChecks>;
  run(propertyId: string, actor: string, input: { expectedBusinessDate: string }): Promise<NightAuditResult>;
}

async function evaluate(tx: Tx, propertyId: string, businessDate: string): Promise<NightAuditCheck[]> {
  const arrivals = (await repo.unarrivedReservations(tx, propertyId, businessDate)).length;
  const departures = await repo.countDeparturesNotCheckedOut(tx, propertyId, businessDate);
  const unbalanced = await repo.countUnbalancedDepartedFolios(tx, propertyId);
  const rooms = await repo.countRoomsWithoutHousekeepingStatus(tx, propertyId, businessDate);
  const check = (id: CheckId, count: number, failing: CheckStatus, ok: string, bad: string): NightAuditCheck => ({
    id,
    status: count === 0 ? "ok" : failing,
    message: count === 0 ? ok : bad.replace("{n}", String(count)),
    count,
  });
  return [
    check(
      "arrivals_not_checked_in",
      arrivals,
      "warning",
      "Every arrival is checked in.",
      "{n} arrival(s) not checked in; the audit marks them as no-shows.",
    ),
    check(
      "departures_not_checked_out",
      departures,
      "blocking",
      "Every departure is checked out.",
      "{n} departing room(s) not checked out; check them out before the audit.",
    ),
    check(
      "unbalanced_departed_folios",
      unbalanced,
      "warning",
      "Every departed guest's folio is balanced.",
      "{n} folio(s) of departed guests have an open balance.",
    ),
    check(
      "rooms_without_housekeeping_status",
      rooms,
      "warning",
      "Every room has a housekeeping status for the day.",
      "{n} room(s) have no housekeeping status for the day.",
    ),
  ];
}

export function createNightAuditService(deps: NightAuditDeps): NightAuditService {
  const { transact, clock, folios } = deps;

  return {
    async getChecks(propertyId) {
      return transact(
        async (tx) => {
          const businessDate = await repo.readBusinessDate(tx, propertyId);
          if (businessDate === undefined) throw new AppError("not_found", "Property not found.");
          const checks = await evaluate(tx, propertyId, businessDate);
          return { businessDate, checks, canRun: checks.every((c) => c.status !== "blocking") };
        },
        { readOnly: true },
      );
    },

    async run(propertyId, actor, input) {
      const expected = input.expectedBusinessDate.trim();
      parseDate("expectedBusinessDate", expected);
      return transact(async (tx) => {
        // The property row lock serializes audits of one property: a second run waits, then sees the new date.
        const property = await repo.lockBusinessDate(tx, propertyId);
        if (property === undefined) throw new AppError("not_found", "Property not found.");
        const businessDate = property.businessDate;
        if (businessDate !== expected) {
          throw new AppError(
            "business_date_moved",
            `The business date is ${businessDate}, not ${expected}; reload and try again.`,
            {
              details: [{ field: "expectedBusinessDate", reason: `business date is ${businessDate}` }],
            },
          );
        }
        const checks = await evaluate(tx, propertyId, businessDate);
        const blocking = checks.filter((c) => c.status === "blocking");
        if (blocking.length > 0) {
          throw new AppError("conflict", "The night audit is blocked by failing checks.", {
            details: blocking.map((c) => ({ field: c.id, reason: c.message })),
          });
        }

        let roomChargesPosted = 0;
        let roomChargesMinor = 0n;
        for (const night of await repo.inHouseNights(tx, propertyId, businessDate)) {
          if (night.amountMinor === null) continue; // a line without a price for the night posts nothing
          const charge = await folios.postRoomCharge(tx, propertyId, {
            reservationId: night.reservationId,
            reservationRoomId: night.reservationRoomId,
            businessDate,
            amountMinor: night.amountMinor,
            description:
              night.roomNumber === null
                ? `Room, night of ${businessDate}`
                : `Room ${night.roomNumber}, night of ${businessDate}`,
            actor,
          });
          if (charge !== undefined) {
            roomChargesPosted++;
            roomChargesMinor += charge.amountMinor;
          }
        }

        const noShows = await repo.unarrivedReservations(tx, propertyId, businessDate);
        for (const reservationId of noShows) await deps.markNoShow(tx, propertyId, reservationId);

        const next = await repo.advanceBusinessDate(tx, propertyId, clock.now());
        return {
          previousBusinessDate: businessDate,
          businessDate: next,
          summary: {
            roomChargesPosted,
            roomChargesMinor,
            noShowsMarked: noShows.length,
            currency: property.currency,
            amountScale: property.amountScale,
            checks,
          },
        };
      });
    },
  };
}
