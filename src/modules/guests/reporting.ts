import type { Queryable } from "../../db/queryable.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { pageOf, pageResult } from "../../lib/page.ts";
import { AppError, invalidField } from "../../errors.ts";
import { recordChange } from "../audit/index.ts";
import { findPropertyById } from "../properties/index.ts";
import type { StayMovement } from "../reservations/index.ts";
import type { GuestCodec } from "./codec.ts";
import type { GuestFields } from "./fields.ts";
import { guestsOnLine } from "./guests.repository.ts";
import {
  countFailedReports,
  deleteReportsPast,
  findListedReport,
  findReport,
  findReportForResend,
  insertReports,
  inHouseLine,
  listReports,
  recordAttempt,
  unreportedInHouse,
  type GuestReportRow,
  type ListedReport,
  type UnreportedGuest,
} from "./reports.repository.ts";
import { ReportSendError, type GuestNotification, type GuestReportSender } from "./report-senders.ts";
import type { GuestVault } from "./vault.ts";
import type { Keyed } from "../../db/held-transaction.ts";

/** The sealed part of a report: the occupant's identity and the stay, as the notification carries them. */
type SealedReport = GuestNotification["guest"] & {
  occurredAt: string;
  reservationCode: string;
  roomNumber: string;
  arrivalDate: string;
  departureDate: string;
};

const reportStatuses = ["pending", "sent", "failed", "incomplete"] as const;
const reportPage = { default: 50, max: 200 } as const;

/** What a notification needs that an occupant's record may lack (the authority refuses it without). */
function missingOf(g: GuestFields): string[] {
  const missing: string[] = [];
  if (g.documentType === "" || g.documentNumber === "") missing.push("document");
  if (g.birthDate === "") missing.push("birthDate");
  if (g.nationality === "") missing.push("nationality");
  return missing;
}

/** Outcome of one attempt, for the metrics: delivered, to be retried, or failed for good. */
export type AttemptOutcome = "sent" | "retried" | "failed";

/**
 * Guest reporting to the police or gendarmerie (KBS): a notification per occupant and movement, queued in the
 * movement's transaction, sent by the configured sender from the `guests.reporting` queue.
 */
export function createGuestReporting(deps: {
  transact: Transact;
  db: Queryable;
  clock: Clock;
  vault: GuestVault;
  codec: GuestCodec;
  retentionYears: number;
}) {
  const { transact, db, clock, vault, codec } = deps;
  const keepUntil = (businessDate: string) => `${Number(businessDate.slice(0, 4)) + deps.retentionYears}-12-31`;

  /**
   * The report rows of the line's occupants (`only`: just these guests) and their jobs, in the caller's tx; made at
   * `createdAt` (the movement's time unless a resend's); answers their ids.
   */
  async function queueInTx(tx: Tx, m: StayMovement, only?: readonly string[], createdAt = m.at): Promise<string[]> {
    const guests = (await guestsOnLine(tx, m.reservationRoomId)).filter(
      (g) => only === undefined || only.includes(g.id),
    );
    const groupId = guests[0]?.groupId ?? (await findPropertyById(tx, m.propertyId))?.groupId;
    if (groupId === undefined) return [];
    const stay = {
      occurredAt: m.at.toISOString(),
      reservationCode: m.reservationCode,
      roomNumber: m.roomNumber,
      arrivalDate: m.arrivalDate,
      departureDate: m.departureDate,
    };
    const row = (guestId: string | null, missing: string[], sealed: SealedReport): GuestReportRow => {
      const id = newId();
      return {
        id,
        propertyId: m.propertyId,
        groupId,
        reservationId: m.reservationId,
        reservationRoomId: m.reservationRoomId,
        guestId,
        movement: m.movement,
        businessDate: m.businessDate,
        status: missing.length === 0 ? "pending" : "incomplete",
        missing,
        sealed: vault.seal(JSON.stringify(sealed), id),
        keyId: vault.keyId,
        attempts: 0,
        lastError: null,
        reference: null,
        sentAt: null,
        createdAt,
        keepUntil: keepUntil(m.businessDate),
      };
    };
    const rows =
      guests.length === 0 && only === undefined
        ? [
            row(null, ["guests"], {
              ...stay,
              givenName: "",
              familyName: "",
              nationality: "",
              birthDate: "",
              documentType: "",
              documentNumber: "",
              documentCountry: "",
            }),
          ]
        : guests.map((g) => {
            const f = codec.fieldsOf(g);
            return row(g.id, missingOf(f), {
              ...stay,
              givenName: f.givenName,
              familyName: f.familyName,
              nationality: f.nationality,
              birthDate: f.birthDate,
              documentType: f.documentType,
              documentNumber: f.documentNumber,
              documentCountry: f.documentCountry,
            });
          });
    await insertReports(tx, rows);
    await tx.enqueueMany(
      queues.guestReporting,
      rows.filter((r) => r.status === "pending").map((r) => ({ reportId: r.id })),
    );
    return rows.map((r) => r.id);
  }

  return {
    /** The check-in or check-out's reports (wired into the front desk by app.ts). */
    reportMovementInTx: async (tx: Tx, m: StayMovement) => void (await queueInTx(tx, m)),

    /** A guest put on a line already checked in is reported as checked in at once. */
    async reportLinkedInTx(tx: Tx, reservationRoomId: string, guestId: string): Promise<void> {
      const line = await inHouseLine(tx, reservationRoomId);
      if (line !== undefined) await queueInTx(tx, { ...line, movement: "check_in", at: clock.now() }, [guestId]);
    },

    /**
     * One attempt at report `reportId` (the guests.reporting job): sent and recorded with the receiver's reference;
     * a refusal, or the last allowed attempt failing, records it failed; any other failure records the error and
     * throws (pg-boss retries with backoff).
     */
    async attempt(
      sender: GuestReportSender,
      reportId: string,
      retryLimit: number,
    ): Promise<AttemptOutcome | "skipped"> {
      const row = await findReport(db, reportId);
      if (row?.status !== "pending") return "skipped";
      const property = await findPropertyById(db, row.propertyId);
      const s = JSON.parse(vault.open(row.sealed, row.id)) as SealedReport;
      const notification: GuestNotification = {
        id: row.id,
        propertyCode: property?.code ?? "",
        movement: row.movement,
        businessDate: row.businessDate,
        occurredAt: s.occurredAt,
        reservationCode: s.reservationCode,
        roomNumber: s.roomNumber,
        arrivalDate: s.arrivalDate,
        departureDate: s.departureDate,
        guest: {
          givenName: s.givenName,
          familyName: s.familyName,
          nationality: s.nationality,
          birthDate: s.birthDate,
          documentType: s.documentType,
          documentNumber: s.documentNumber,
          documentCountry: s.documentCountry,
        },
      };
      try {
        const { reference } = await sender.send(notification);
        await transact(async (tx) => {
          if (await recordAttempt(tx, row.id, { status: "sent", reference, at: clock.now() }))
            recordChange(tx, {
              propertyId: row.propertyId,
              entity: "guest_report",
              entityId: row.id,
              action: "send",
              before: { status: "pending" },
              after: { status: "sent", reference, attempts: row.attempts + 1 },
            });
        });
        return "sent";
      } catch (err) {
        const error = err instanceof ReportSendError ? err.message : "sender error";
        const last = (err instanceof ReportSendError && err.permanent) || row.attempts >= retryLimit;
        await transact(async (tx) => {
          if ((await recordAttempt(tx, row.id, { status: last ? "failed" : "pending", error })) && last)
            recordChange(tx, {
              propertyId: row.propertyId,
              entity: "guest_report",
              entityId: row.id,
              action: "fail",
              before: { status: "pending" },
              after: { status: "failed", error, attempts: row.attempts + 1 },
            });
        });
        if (last) return "failed";
        throw new ReportSendError(error);
      }
    },

    /**
     * A failed or incomplete report made again from the occupant's record as it is now (ResendGuestReport): a new
     * report of the same occupant, line and movement, with the stay the first one sealed, queued; the first stays.
     */
    async resend(propertyId: string, reportId: string, keyed?: Keyed): Promise<ListedReport> {
      const notFound = () => new AppError("not_found", "Guest report not found.");
      if (!isUuid(reportId)) throw notFound();
      return transact(async (tx) => {
        const row = await findReportForResend(tx, propertyId, reportId);
        if (row === undefined) throw notFound();
        if (row.status !== "failed" && row.status !== "incomplete")
          throw new AppError(
            "conflict",
            `Only a failed or incomplete report is sent again; this one is ${row.status}.`,
          );
        if (row.superseded)
          throw new AppError("conflict", "A newer report of this guest and movement exists: send that one again.");
        if (row.guestId === null)
          throw new AppError(
            "conflict",
            "The line was checked in without guests: put them on the room line (a guest added in house is reported at once).",
          );
        const s = JSON.parse(vault.open(row.sealed, row.id)) as SealedReport;
        const movement: StayMovement = {
          propertyId,
          reservationId: row.reservationId,
          reservationRoomId: row.reservationRoomId,
          reservationCode: s.reservationCode,
          roomNumber: s.roomNumber,
          arrivalDate: s.arrivalDate,
          departureDate: s.departureDate,
          businessDate: row.businessDate,
          movement: row.movement,
          at: new Date(s.occurredAt),
        };
        const [id] = await queueInTx(tx, movement, [row.guestId], clock.now());
        if (id === undefined) throw new AppError("conflict", "The guest is no longer on the room line.");
        recordChange(tx, {
          propertyId,
          entity: "guest_report",
          entityId: row.id,
          action: "resend",
          before: { status: row.status },
          after: { status: row.status, resentAs: id },
        });
        return findListedReport(tx, propertyId, id);
      }, keyed);
    },

    /** A page of the property's reports, newest first (ListGuestReports). */
    async list(
      propertyId: string,
      input: { status: string; cursor: string; limit: number },
    ): Promise<{ reports: ListedReport[]; nextCursor: string }> {
      if (input.status !== "" && !(reportStatuses as readonly string[]).includes(input.status))
        throw invalidField("status", `one of ${reportStatuses.join(", ")} (or empty: all)`);
      const page = pageOf(input, reportPage);
      const rows = await listReports(
        db,
        propertyId,
        input.status === "" ? undefined : input.status,
        page.after,
        page.limit + 1,
      );
      const { items, nextCursor } = pageResult(rows, page.limit);
      return { reports: items, nextCursor };
    },

    /** The in-house occupants not reported and the failed reports (dashboard, night audit, ListGuestReports). */
    async issues(propertyId: string, q: Queryable = db): Promise<{ unreported: UnreportedGuest[]; failed: number }> {
      // one after the other: `q` may be a transaction's one connection
      const unreported = await unreportedInHouse(q, propertyId);
      return { unreported, failed: await countFailedReports(q, propertyId) };
    },

    /** Deletes reports past their period in batches; returns how many. */
    async purgePastRetention(): Promise<number> {
      const today = clock.now().toISOString().slice(0, 10);
      let deleted = 0;
      for (let i = 0; i < 100; i++) {
        const n = await transact((tx) => deleteReportsPast(tx, today, 1000));
        deleted += n;
        if (n < 1000) break;
      }
      return deleted;
    },
  };
}
