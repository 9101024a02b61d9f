import { fromJson } from "@bufbuild/protobuf";
import { ListValueSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { MobileService } from "../../../gen/hotelops/mobile/v1/mobile_pb.js";
import { AppError } from "../../errors.ts";
import { requireStaff, type Principal } from "../auth/index.ts";
import type { RatePlanDeposit } from "../inventory/index.ts";
import type { NightAuditCheck, NightAuditService } from "../night-audit/index.ts";
import { lineGuestsFor, reservationOut, type Actor, type LineGuests } from "../reservations/index.ts";
import type { MobileReservations } from "./reservations.service.ts";
import type { ReportColumn, ReportsService, StatsService } from "../reports/index.ts";
import { keyedOf } from "../../server/context.ts";

/** The RPCs of MobileService this module implements (the identity module implements ScanIdentityDocument). */
export type MobileRpc = Omit<ServiceImpl<typeof MobileService>, "scanIdentityDocument" | "listAuditChanges">;

export interface MobileRpcServices {
  reservations: MobileReservations;
  stats: StatsService;
  reports: ReportsService;
  nightAudit: NightAuditService;
  lineGuests?: LineGuests | undefined;
  /** In-house occupants not reported to the authority and failed guest reports (the guests module's). */
  guestReporting?: ((propertyId: string) => Promise<{ unreported: number; failed: number }>) | undefined;
}

function requireAny(principal: Extract<Principal, { kind: "staff" }>, ...permissions: string[]): void {
  if (!permissions.some((p) => principal.permissions.has(p)))
    throw new AppError("forbidden", `Missing permission ${permissions.join(" or ")} in the active property.`);
}

const actorOf = (p: Extract<Principal, { kind: "staff" }>, ctx: HandlerContext): Actor => ({
  propertyId: p.activePropertyId,
  canOverridePrice: p.permissions.has("reservations.override_price"),
  canOverbook: p.permissions.has("reservations.overbook"),
  by: `user:${p.userId}`,
  keyed: keyedOf(ctx),
});
const columnOut = (c: ReportColumn & { currency?: string; amountScale?: number }) => ({
  key: c.key,
  label: c.label,
  type: c.type,
  currency: c.currency,
  amountScale: c.amountScale,
});
const depositRuleOut = (d: RatePlanDeposit) => ({
  kind: d.kind,
  value: d.value,
  dueAnchor: d.dueAnchor,
  dueDays: d.dueDays,
});
const checkOut = (c: NightAuditCheck) => ({ id: c.id, status: c.status, message: c.message, count: c.count });

export function mobileRpc(s: MobileRpcServices): MobileRpc {
  return {
    async getReservationOptions(req, ctx) {
      const p = requireStaff(ctx.values);
      requireAny(p, "reservations.view", "reservations.create");
      const o = await s.reservations.options(p.activePropertyId, {
        arrivalDate: req.arrivalDate,
        departureDate: req.departureDate,
        adults: req.adults,
        children: req.children,
      });
      return {
        currency: o.currency,
        amountScale: o.amountScale,
        roomTypes: o.roomTypes.map((rt) => ({
          id: rt.id,
          code: rt.code,
          name: rt.name,
          maxOccupancy: rt.maxOccupancy,
        })),
        ratePlans: o.ratePlans.map((rp) => ({
          id: rp.id,
          code: rp.code,
          name: rp.name,
          boardType: rp.boardType,
          roomTypeIds: rp.roomTypeIds,
          ...(rp.policy === null
            ? {}
            : {
                cancellationPolicy: {
                  freeUntilHours: rp.policy.freeHours,
                  feeKind: rp.policy.feeKind,
                  feeValue: rp.policy.feeValue,
                },
              }),
          ...(rp.deposit === null ? {} : { depositPolicy: depositRuleOut(rp.deposit) }),
        })),
        rooms: o.rooms.map((r) => ({ id: r.id, number: r.number, roomTypeId: r.roomTypeId, status: r.status })),
        boardTypes: [...o.boardTypes],
        sources: [...o.sources],
        quotes: o.quotes.map(({ deposit, ...q }) => ({
          ...q,
          ...(deposit === undefined
            ? {}
            : {
                deposit: {
                  amountMinor: deposit.amountMinor,
                  dueDate: deposit.dueDate,
                  rule: depositRuleOut(deposit.rule),
                },
              }),
        })),
      };
    },
    async createMobileReservation(req, ctx) {
      const p = requireStaff(ctx.values);
      const r = await s.reservations.create(actorOf(p, ctx), {
        holderName: req.holderName,
        arrivalDate: req.arrivalDate,
        departureDate: req.departureDate,
        roomTypeId: req.roomTypeId,
        ratePlanId: req.ratePlanId,
        adults: req.adults,
        totalMinor: req.totalMinor,
        currency: req.currency,
        priceOverride: req.priceOverride,
        overbook: req.overbook,
        children: req.children,
        roomId: req.roomId,
        boardType: req.boardType,
        source: req.source,
        status: req.status,
        notes: req.notes,
        optionUntil: req.optionUntil === undefined ? undefined : timestampDate(req.optionUntil),
      });
      return { reservation: reservationOut(r) };
    },
    async listMobileReservations(req, ctx) {
      const p = requireStaff(ctx.values);
      const page = await s.reservations.list(actorOf(p, ctx), {
        from: req.from,
        to: req.to,
        status: req.status,
        cursor: req.cursor,
        limit: req.limit,
      });
      return {
        reservations: page.reservations.map((r) => reservationOut(r)),
        nextCursor: page.nextCursor,
        hasMore: page.hasMore,
      };
    },
    async getMobileReservation(req, ctx) {
      const p = requireStaff(ctx.values);
      const { reservation, folioBalanceMinor } = await s.reservations.get(actorOf(p, ctx), req.reservationId);
      const guests = await lineGuestsFor(s.lineGuests, p, reservation);
      return {
        reservation: reservationOut(reservation, guests),
        ...(folioBalanceMinor === null ? {} : { folioBalanceMinor }),
      };
    },
    async reinstateMobileReservation(req, ctx) {
      const p = requireStaff(ctx.values);
      return { reservation: reservationOut(await s.reservations.reinstate(actorOf(p, ctx), req.reservationId)) };
    },
    async getDashboard(_req, ctx) {
      const propertyId = requireStaff(ctx.values).activePropertyId;
      const [dashboard, reporting] = await Promise.all([
        s.stats.dashboard(propertyId),
        s.guestReporting?.(propertyId) ?? { unreported: 0, failed: 0 },
      ]);
      return { ...dashboard, unreportedGuests: reporting.unreported, failedGuestReports: reporting.failed };
    },
    async getForecast(req, ctx) {
      return s.stats.forecast(requireStaff(ctx.values).activePropertyId, {
        year: req.year,
        month: req.month,
        includeOptions: req.includeOptions,
      });
    },
    async listReports() {
      return {
        reports: s.reports.catalogue().map((r) => ({
          reportId: r.id,
          name: r.name,
          description: r.description,
          columns: r.columns.map(columnOut),
        })),
      };
    },
    async runReport(req, ctx) {
      const p = requireStaff(ctx.values);
      const run = await s.reports.run(
        p.activePropertyId,
        { userId: p.userId, sessionId: p.sessionId },
        { reportId: req.reportId, start: req.start, end: req.end },
      );
      return {
        ok: true,
        runId: run.runId,
        name: run.name,
        rowCount: run.rowCount,
        columns: run.columns.map(columnOut),
        rows: run.rows.map((row) => fromJson(ListValueSchema, row)),
        truncated: run.truncated,
      };
    },
    async getMobileNightAudit(_req, ctx) {
      const p = requireStaff(ctx.values);
      requireAny(p, "night_audit.run", "dashboard.view");
      const res = await s.nightAudit.getChecks(p.activePropertyId);
      return {
        businessDate: res.businessDate,
        checks: res.checks.map(checkOut),
        canRun: res.canRun && p.permissions.has("night_audit.run"),
        unchargedNights: res.unchargedNights.map((n) => ({ ...n })),
      };
    },
    async runMobileNightAudit(req, ctx) {
      const p = requireStaff(ctx.values);
      const res = await s.nightAudit.run(
        p.activePropertyId,
        `user:${p.userId}`,
        {
          expectedBusinessDate: req.expectedBusinessDate,
        },
        keyedOf(ctx),
      );
      return {
        previousBusinessDate: res.previousBusinessDate,
        businessDate: res.businessDate,
        summary: {
          ...res.summary,
          checks: res.summary.checks.map(checkOut),
          unchargedNights: res.summary.unchargedNights.map((n) => ({ ...n })),
        },
      };
    },
  };
}
