import { AppError } from "../../errors.ts";
import type { Queryable } from "../../db/queryable.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { parseDate } from "../../lib/dates.ts";
import type { FolioService } from "../folio/index.ts";
import * as repo from "./night-audit.repository.ts";
import type { Keyed } from "../../db/held-transaction.ts";

type CheckStatus = "ok" | "warning" | "blocking";
type CheckId =
  | "arrivals_not_checked_in"
  | "departures_not_checked_out"
  | "unbalanced_departed_folios"
  | "rooms_without_housekeeping_status"
  | "room_charges_not_postable"
  | "guests_not_reported";

export interface NightAuditCheck {
  id: CheckId;
  status: CheckStatus;
  message: string;
  count: number;
}

/** A room night the audit did not charge, and why (it is tried again by every later audit). */
export interface UnchargedNight {
  reservationId: string;
  reservationCode: string;
  reservationRoomId: string;
  businessDate: string;
  reason: string;
}

interface NightAuditChecks {
  businessDate: string;
  checks: NightAuditCheck[];
  canRun: boolean;
  /** What the check room_charges_not_postable counts: the nights that cannot be charged now. */
  unchargedNights: UnchargedNight[];
}

interface NightAuditSummary {
  roomChargesPosted: number;
  roomChargesMinor: bigint;
  noShowsMarked: number;
  currency: string;
  amountScale: number;
  checks: NightAuditCheck[];
  /** The nights this audit could not charge. */
  unchargedNights: UnchargedNight[];
}

interface NightAuditResult {
  previousBusinessDate: string;
  businessDate: string;
  summary: NightAuditSummary;
}

/**
 * Marks a reservation as a no-show inside the caller's transaction, through the reservations service so
 * that inventory is released and the reservation events are written. Wired in app.ts.
 */
/** Marks a stay NO_SHOW inside the audit's transaction (posting its rate plan's no-show fee, by `by`). */
type MarkNoShow = (tx: Tx, propertyId: string, reservationId: string, by: string) => Promise<void>;

export interface NightAuditDeps {
  transact: Transact;
  clock: Clock;
  folios: FolioService;
  markNoShow: MarkNoShow;
  /** In-house occupants not reported to the authority (KBS) and failed guest reports (the guests module's). */
  guestReporting?: (propertyId: string, q: Queryable) => Promise<{ unreported: number; failed: number }>;
  /** Warns about every night the audit leaves uncharged, naming the reservation. */
  logger?: Logger;
}

export interface NightAuditService {
  getChecks(propertyId: string): Promise<NightAuditChecks>;
  run(
    propertyId: string,
    actor: string,
    input: { expectedBusinessDate: string },
    keyed?: Keyed,
  ): Promise<NightAuditResult>;
}

/** A room night to charge: tonight's of an in-house line, or an earlier one an audit could not charge. */
interface NightToCharge {
  reservationId: string;
  reservationCode: string;
  reservationRoomId: string;
  roomNumber: string | null;
  date: string;
  amountMinor: bigint;
  /** Recorded as uncharged by an earlier audit. */
  earlier: boolean;
}

/**
 * Tonight's nights and the earlier uncharged ones still worth charging (the stay still IN_HOUSE or CHECKED_OUT, a
 * price above zero); `dropped` are earlier rows that have nothing left to charge.
 */
async function nightsToCharge(
  tx: Tx,
  propertyId: string,
  businessDate: string,
): Promise<{ nights: NightToCharge[]; dropped: { reservationRoomId: string; date: string }[] }> {
  const pending = await repo.pendingUnchargedNights(tx, propertyId);
  const earlier = await repo.roomNightsOf(tx, propertyId, pending);
  const tonight = await repo.inHouseNights(tx, propertyId, businessDate);
  const nights: NightToCharge[] = [];
  const kept = new Set<string>();
  for (const n of earlier) {
    if (n.amountMinor === null || n.amountMinor === 0n || !["IN_HOUSE", "CHECKED_OUT"].includes(n.status)) continue;
    kept.add(`${n.reservationRoomId}|${n.date}`);
    nights.push({ ...n, amountMinor: n.amountMinor, earlier: true });
  }
  for (const n of tonight) {
    if (n.amountMinor === null) continue; // a line without a price for the night posts nothing
    nights.push({ ...n, amountMinor: n.amountMinor, date: businessDate, earlier: false });
  }
  return { nights, dropped: pending.filter((p) => !kept.has(`${p.reservationRoomId}|${p.date}`)) };
}

/** The nights that cannot be charged now (each folio's balance followed night by night). */
async function unchargeable(tx: Tx, propertyId: string, nights: readonly NightToCharge[]): Promise<UnchargedNight[]> {
  const balances = await repo.folioBalancesOfReservations(tx, propertyId, [
    ...new Set(nights.map((n) => n.reservationId)),
  ]);
  const out: UnchargedNight[] = [];
  for (const n of nights) {
    const balance = balances.get(n.reservationId) ?? 0n;
    const reason = repo.roomChargeProblem(n.amountMinor, balance);
    if (reason === undefined) balances.set(n.reservationId, balance + n.amountMinor);
    else out.push(unchargedOf(n, reason));
  }
  return out;
}

const unchargedOf = (n: NightToCharge, reason: string): UnchargedNight => ({
  reservationId: n.reservationId,
  reservationCode: n.reservationCode,
  reservationRoomId: n.reservationRoomId,
  businessDate: n.date,
  reason,
});

async function evaluate(
  tx: Tx,
  propertyId: string,
  businessDate: string,
  uncharged: readonly UnchargedNight[],
  guestReporting: NightAuditDeps["guestReporting"],
): Promise<NightAuditCheck[]> {
  const reporting = (await guestReporting?.(propertyId, tx)) ?? { unreported: 0, failed: 0 };
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
    check(
      "room_charges_not_postable",
      uncharged.length,
      "warning",
      "Every room night can be charged.",
      `{n} room night(s) cannot be charged (${namedStays(uncharged)}); the audit leaves them out and lists them. ` +
        "Fix the stay's price, and the next audit charges them.",
    ),
    check(
      "guests_not_reported",
      reporting.unreported + reporting.failed,
      "warning",
      "Every in-house guest is reported to the police or gendarmerie.",
      `${reporting.unreported} in-house guest(s) or room(s) without guests not reported and ${reporting.failed} failed ` +
        "guest report(s); complete the guests' records (document, birth date, nationality) and see the guest reports.",
    ),
  ];
}

/** The reservation codes of uncharged nights, at most 10 named. */
function namedStays(uncharged: readonly UnchargedNight[]): string {
  const codes = [...new Set(uncharged.map((u) => u.reservationCode))];
  return codes.length <= 10 ? codes.join(", ") : `${codes.slice(0, 10).join(", ")} and ${codes.length - 10} more`;
}

export function createNightAuditService(deps: NightAuditDeps): NightAuditService {
  const { transact, clock, folios } = deps;

  return {
    async getChecks(propertyId) {
      return transact(
        async (tx) => {
          const businessDate = await repo.readBusinessDate(tx, propertyId);
          if (businessDate === undefined) throw new AppError("not_found", "Property not found.");
          const { nights } = await nightsToCharge(tx, propertyId, businessDate);
          const unchargedNights = await unchargeable(tx, propertyId, nights);
          const checks = await evaluate(tx, propertyId, businessDate, unchargedNights, deps.guestReporting);
          return { businessDate, checks, canRun: checks.every((c) => c.status !== "blocking"), unchargedNights };
        },
        { readOnly: true },
      );
    },

    async run(propertyId, actor, input, keyed) {
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
        const { nights, dropped } = await nightsToCharge(tx, propertyId, businessDate);
        const checks = await evaluate(
          tx,
          propertyId,
          businessDate,
          await unchargeable(tx, propertyId, nights),
          deps.guestReporting,
        );
        const blocking = checks.filter((c) => c.status === "blocking");
        if (blocking.length > 0) {
          throw new AppError("conflict", "The night audit is blocked by failing checks.", {
            details: blocking.map((c) => ({ field: c.id, reason: c.message })),
          });
        }

        let roomChargesPosted = 0;
        let roomChargesMinor = 0n;
        const unchargedNights: UnchargedNight[] = [];
        const now = clock.now();
        for (const n of dropped) await repo.clearUnchargedNight(tx, propertyId, n.reservationRoomId, n.date);
        for (const night of nights) {
          let charge;
          try {
            charge = await folios.postRoomCharge(tx, propertyId, {
              reservationId: night.reservationId,
              reservationRoomId: night.reservationRoomId,
              businessDate: night.date,
              amountMinor: night.amountMinor,
              description:
                night.roomNumber === null
                  ? `Room, night of ${night.date}`
                  : `Room ${night.roomNumber}, night of ${night.date}`,
              actor,
            });
          } catch (err) {
            // One stay never stops the hotel's audit: postRoomCharge refuses before writing anything.
            if (!(err instanceof AppError && err.code === "validation_failed")) throw err;
            const u = unchargedOf(night, err.details[0]?.reason ?? err.message);
            unchargedNights.push(u);
            await repo.recordUnchargedNight(tx, propertyId, u, now);
            deps.logger?.warn(
              {
                propertyId,
                reservationId: u.reservationId,
                reservationCode: u.reservationCode,
                night: u.businessDate,
              },
              `night audit: room night not charged: ${u.reason}`,
            );
            continue;
          }
          if (night.earlier) await repo.clearUnchargedNight(tx, propertyId, night.reservationRoomId, night.date);
          if (charge !== undefined) {
            roomChargesPosted++;
            roomChargesMinor += charge.amountMinor;
          }
        }

        const noShows = await repo.unarrivedReservations(tx, propertyId, businessDate);
        for (const reservationId of noShows) await deps.markNoShow(tx, propertyId, reservationId, actor);

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
            unchargedNights,
          },
        };
      }, keyed);
    },
  };
}
