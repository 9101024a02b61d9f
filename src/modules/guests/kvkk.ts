import { AppError, invalidField } from "../../errors.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, requireId } from "../../lib/ids.ts";
import { recordChange } from "../audit/index.ts";
import { foliosOfReservations } from "../folio/index.ts";
import { invoicesOfFolios } from "../invoices/index.ts";
import type { Guest, GuestCodec } from "./codec.ts";
import { emptyGuestFields, type GuestFields } from "./fields.ts";
import {
  findGuest,
  guestsPastRetention,
  markGuestErased,
  propertiesWithGuests,
  updateGuestRow,
  type GuestRow,
} from "./guests.repository.ts";
import type { GuestScope } from "./guests.service.ts";
import { guestInHouse, lastStaySql, staysOfGuest } from "./stays.repository.ts";

/** What an erasure keeps, and the obligation that keeps it (EraseGuest's answer, docs/staff/guests.md). */
export const keptOnErasure = [
  {
    data: "invoices",
    reason:
      "issued invoices and their buyer data are kept 10 years (Tax Procedure Law 213, arts. 253 and 254); drafts go with their folio",
  },
  {
    data: "reservations and folios",
    reason:
      "the stays' bookings and folios (holder name, dates, rooms, amounts) are accounting records kept with the invoices (Turkish Commercial Code 6102, art. 82: 10 years)",
  },
  {
    data: "stays",
    reason: "the links of the anonymised profile to its room lines, without personal data (occupancy statistics)",
  },
  {
    data: "guest reports",
    reason:
      "the check-in and check-out notifications to the police or gendarmerie (KBS, Law 1774) are kept for their legal period (GUEST_REPORT_RETENTION_YEARS), then deleted by the retention job",
  },
  {
    data: "audit trail",
    reason: "who changed what and when, personal values masked (KVKK art. 12 data security duties)",
  },
] as const;

/** The fields of an erased guest: names replaced, everything else removed. */
const erasedFields: GuestFields = { ...emptyGuestFields, givenName: "Erased", familyName: "Guest" };

/** An erased guest is kept only as a stand-in: it is not changed, linked or merged any more. */
export function refuseErased(row: Pick<GuestRow, "erasedAt">): void {
  if (row.erasedAt !== null) throw new AppError("conflict", "The guest's personal data was erased.");
}

/** JSON as the export carries it: bigint as decimal text, instants as ISO text. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))) as unknown;
}

/** KVKK rights: the data subject's export and erasure. */
export function createGuestKvkk(deps: { transact: Transact; clock: Clock; codec: GuestCodec }) {
  const { transact, clock, codec } = deps;

  const guestRow = async (tx: Tx, scope: GuestScope, guestId: string, lock: boolean): Promise<GuestRow> => {
    if (guestId === "") throw invalidField("guestId", "is required");
    const row = await findGuest(tx, scope.groupId, requireId(guestId, "Guest"), lock);
    if (row === undefined) throw new AppError("not_found", "Guest not found.");
    return row;
  };

  /** Anonymises the locked row in place and records it (`reason`: the guest's request or the retention job). */
  const eraseRow = async (tx: Tx, propertyId: string, row: GuestRow, reason: "request" | "retention") => {
    const before = codec.fieldsOf(row);
    const now = clock.now();
    const erased = codec.rowOf({ ...row, erasedAt: now }, erasedFields);
    await updateGuestRow(tx, erased);
    await markGuestErased(tx, row.id, now);
    recordChange(tx, {
      propertyId,
      entity: "guest",
      entityId: row.id,
      action: "erase",
      before,
      after: { ...erasedFields, erased: true, reason },
    });
    return erased;
  };

  return {
    /**
     * The retention job's batch: anonymises up to `batch` profiles whose last stay (or creation, without a stay) is
     * more than `years` full calendar years past (recorded as `erase` with reason `retention`, in the trail of the
     * property that created the profile); returns how many.
     */
    async erasePastRetention(years: number, batch = 500, byProperty?: Map<string, number>): Promise<number> {
      return transact(async (tx) => {
        const rows = await guestsPastRetention(tx, lastStaySql, years, clock.now(), batch);
        for (const row of rows) {
          await eraseRow(tx, row.createdPropertyId, row, "retention");
          byProperty?.set(row.createdPropertyId, (byProperty.get(row.createdPropertyId) ?? 0) + 1);
        }
        return rows.length;
      });
    },

    /**
     * Records one retention run in the audit trail of every property that holds guest profiles (entity
     * `guest_retention`, action `run`): how many profiles it anonymised there and how many guest reports past their
     * period were deleted across the platform.
     */
    async recordRetentionRun(run: {
      years: number;
      anonymised: ReadonlyMap<string, number>;
      reportsDeleted: number;
    }): Promise<void> {
      await transact(async (tx) => {
        const runId = newId();
        for (const propertyId of await propertiesWithGuests(tx))
          recordChange(tx, {
            propertyId,
            entity: "guest_retention",
            entityId: runId,
            action: "run",
            after: {
              anonymised: run.anonymised.get(propertyId) ?? 0,
              retentionYears: run.years,
              reportsDeleted: run.reportsDeleted,
            },
          });
      });
    },

    /** Everything held about the guest (ExportGuest), recorded in the audit trail. */
    async exportGuest(scope: GuestScope, guestId: string): Promise<Record<string, unknown>> {
      return transact(async (tx) => {
        const row = await guestRow(tx, scope, guestId, false);
        const stays = await staysOfGuest(tx, scope.groupId, row.id, undefined, 100_000);
        const byProperty = new Map<string, string[]>();
        for (const s of stays) byProperty.set(s.propertyId, [...(byProperty.get(s.propertyId) ?? []), s.reservationId]);
        const folios = [];
        const invoices = [];
        for (const [propertyId, reservationIds] of byProperty) {
          const found = await foliosOfReservations(tx, propertyId, [...new Set(reservationIds)]);
          folios.push(...found);
          invoices.push(
            ...(await invoicesOfFolios(
              tx,
              propertyId,
              found.map((f) => f.id),
            )),
          );
        }
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: row.id,
          action: "export",
          after: { stays: stays.length, folios: folios.length, invoices: invoices.length },
        });
        const { erasedAt, ...guest } = codec.guestOf(row, true);
        return plain({
          exportedAt: clock.now(),
          guest: { ...guest, ...(erasedAt === null ? {} : { erasedAt }) },
          stays: stays.map(({ propertyId: _, ...s }) => s),
          folios: folios.map((f) => ({
            id: f.id,
            number: f.number,
            reservationId: f.reservationId,
            reservationCode: f.reservationCode,
            currency: f.currency,
            amountScale: f.amountScale,
            balanceMinor: f.balanceMinor,
            createdAt: f.createdAt,
          })),
          invoices: invoices.map((i) => ({
            id: i.id,
            folioId: i.folioId,
            status: i.status,
            series: i.series,
            number: i.number,
            issueDate: i.issueDate,
            totalMinor: i.totalMinor,
            currency: i.currency,
            amountScale: i.amountScale,
            buyer: i.buyer,
          })),
        }) as Record<string, unknown>;
      });
    },

    /** Anonymises the guest (EraseGuest); idempotent; refused while the guest is in house. */
    async eraseGuest(
      scope: GuestScope,
      guestId: string,
    ): Promise<{ guest: Guest; alreadyErased: boolean; kept: typeof keptOnErasure }> {
      return transact(async (tx) => {
        const row = await guestRow(tx, scope, guestId, true);
        if (row.erasedAt !== null)
          return { guest: codec.guestOf(row, false), alreadyErased: true, kept: keptOnErasure };
        if (await guestInHouse(tx, row.id))
          throw new AppError("conflict", "The guest is in house: erase after check-out.");
        const erased = await eraseRow(tx, scope.propertyId, row, "request");
        return { guest: codec.guestOf(erased, false), alreadyErased: false, kept: keptOnErasure };
      });
    },
  };
}
