import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import {
  ReservationService as ReservationRpc,
  ReservationSource as SourceEnum,
  ReservationStatus as StatusEnum,
  type RoomLineInput as RoomLineInputMsg,
} from "../../../gen/hotelops/reservation/v1/reservation_pb.js";
import type { GuestSchema } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import { AppError, invalidField } from "../../errors.ts";
import { holds, requestProperty, requirePrincipal } from "../auth/index.ts";
import type { Actor, ReservationService, RoomLineInput } from "./reservation.service.ts";
import type { Reservation } from "./reservation.repository.ts";
import { checkStaffSource, type ReservationSource, type ReservationStatus } from "./transitions.ts";
import { keyedOf } from "../../server/context.ts";

export const reservationRpcServices = [ReservationRpc];

function statusIn(value: StatusEnum): ReservationStatus | undefined {
  if (value === StatusEnum.UNSPECIFIED) return undefined;
  const name = StatusEnum[value] as ReservationStatus | undefined;
  if (name === undefined) throw invalidField("status", "unknown status");
  return name;
}

function bookableStatus(value: StatusEnum): "TENTATIVE" | "GUARANTEED" | undefined {
  const s = statusIn(value);
  if (s !== undefined && s !== "TENTATIVE" && s !== "GUARANTEED")
    throw invalidField("status", "TENTATIVE or GUARANTEED");
  return s;
}

function sourceIn(value: SourceEnum): ReservationSource {
  if (value === SourceEnum.UNSPECIFIED) return "DIRECT";
  const name = SourceEnum[value] as ReservationSource | undefined;
  if (name === undefined) throw invalidField("source", "unknown source");
  return name;
}

const lineIn = (l: RoomLineInputMsg): RoomLineInput => ({
  roomTypeId: l.roomTypeId,
  ratePlanId: l.ratePlanId,
  roomId: l.roomId,
  adults: l.adults,
  children: l.children,
  amountMinor: l.amountMinor,
});

import { lineFee } from "./policy-fees.ts";

/**
 * The guest profiles linked to room lines, by line id (the guests module's reader, wired in app.ts): masked unless
 * `reveal`, a read of personal data the reader records.
 */
export type LineGuests = (
  propertyId: string,
  lineIds: readonly string[],
  reveal: boolean,
) => Promise<Map<string, MessageInitShape<typeof GuestSchema>[]>>;

/** The room lines' guests for a staff caller (empty for clients: they never see guest profiles). */
export async function lineGuestsFor(
  lineGuests: LineGuests | undefined,
  principal: ReturnType<typeof requirePrincipal>,
  r: Reservation,
): Promise<Map<string, MessageInitShape<typeof GuestSchema>[]> | undefined> {
  if (lineGuests === undefined || principal.kind !== "staff") return undefined;
  return lineGuests(
    r.propertyId,
    r.rooms.map((l) => l.id),
    holds(principal, "guests.read_sensitive"),
  );
}

export function reservationOut(r: Reservation, guests?: Map<string, MessageInitShape<typeof GuestSchema>[]>) {
  return {
    id: r.id,
    code: r.code,
    status: StatusEnum[r.status],
    source: SourceEnum[r.source],
    ...(r.channel !== null ? { channel: r.channel } : {}),
    ...(r.externalReference !== null ? { externalReference: r.externalReference } : {}),
    holderName: r.holderName,
    arrivalDate: r.arrivalDate,
    departureDate: r.departureDate,
    adults: r.adults,
    children: r.children,
    notes: r.notes,
    totalMinor: r.totalMinor,
    amountScale: r.amountScale,
    currency: r.currency,
    ...(r.cancelledAt !== null ? { cancelledAt: timestampFromDate(r.cancelledAt) } : {}),
    createdAt: timestampFromDate(r.createdAt),
    updatedAt: timestampFromDate(r.updatedAt),
    changeSeq: r.changeSeq,
    ...(r.rateDifferenceMinor !== null ? { rateDifferenceMinor: r.rateDifferenceMinor } : {}),
    restrictionOverrides: r.restrictionOverrides,
    overbooked: r.overbookedNights.length > 0,
    overbookedNights: r.overbookedNights.map((n) => ({
      date: n.date,
      roomTypeId: n.roomTypeId,
      roomTypeCode: n.roomTypeCode,
      rooms: n.rooms,
    })),
    ...(r.optionUntil !== null ? { optionUntil: timestampFromDate(r.optionUntil) } : {}),
    ...(r.cancellationReason !== null ? { cancellationReason: r.cancellationReason } : {}),
    remarks: r.remarks,
    ...(r.paymentGuarantee !== null ? { paymentGuarantee: r.paymentGuarantee } : {}),
    ...(r.depositDueDate !== null
      ? {
          deposit: {
            dueMinor: r.depositDueMinor,
            dueDate: r.depositDueDate,
            paidMinor: r.depositPaidMinor,
            overdue: r.depositOverdue,
          },
        }
      : {}),
    rooms: r.rooms.map((l) => ({
      id: l.id,
      roomTypeId: l.roomTypeId,
      roomTypeCode: l.roomTypeCode,
      ratePlanId: l.ratePlanId,
      ratePlanCode: l.ratePlanCode,
      ...(l.roomId !== null ? { roomId: l.roomId, roomNumber: l.roomNumber ?? "" } : {}),
      adults: l.adults,
      children: l.children,
      nightlyMinor: l.nightlyMinor,
      totalMinor: l.totalMinor,
      ...(l.checkedInAt !== null ? { checkedInAt: timestampFromDate(l.checkedInAt) } : {}),
      ...(l.checkedOutAt !== null ? { checkedOutAt: timestampFromDate(l.checkedOutAt) } : {}),
      guestNames: l.guestNames,
      guests: guests?.get(l.id) ?? [],
      ...(l.policy === null
        ? {}
        : {
            cancellationPolicy: {
              freeUntilHours: l.policy.freeUntilHours,
              feeKind: l.policy.feeKind,
              feeValue: l.policy.feeValue,
              freeUntil: timestampFromDate(l.policy.freeUntil),
              feeMinor: lineFee(l),
            },
          }),
    })),
  };
}

export function registerReservationRpc(
  router: ConnectRouter,
  service: ReservationService,
  lineGuests?: LineGuests,
): void {
  const actorOf = (ctx: HandlerContext): Actor => {
    const principal = requirePrincipal(ctx.values);
    // The property the request names, checked against the caller's reach by the authentication interceptor. REST
    // always names it in the path; a gRPC/Connect staff caller may leave it out and act on the session's active
    // property, as the mobile API does. A client reaches several properties: it must say which.
    const property = requestProperty(ctx.values);
    if (property === undefined) throw invalidField("propertyCode", "is required");
    return {
      propertyId: property.id,
      canOverridePrice: holds(principal, "reservations.override_price"),
      canOverbook: holds(principal, "reservations.overbook"),
      by: principal.kind === "staff" ? `user:${principal.userId}` : `client:${principal.clientId}`,
      keyed: keyedOf(ctx),
    };
  };
  router.service(ReservationRpc, {
    async createReservation(req, ctx) {
      const actor = actorOf(ctx);
      const source = sourceIn(req.source);
      if (requirePrincipal(ctx.values).kind === "staff") checkStaffSource(source);
      const { reservation, created } = await service.create(actor, {
        source,
        channel: req.channel ?? null,
        externalReference: req.externalReference ?? null,
        holderName: req.holderName,
        arrivalDate: req.arrivalDate,
        departureDate: req.departureDate,
        rooms: req.rooms.map(lineIn),
        status: bookableStatus(req.status),
        notes: req.notes,
        totalMinor: req.totalMinor,
        currency: req.currency,
        priceOverride: req.priceOverride,
        overbook: req.overbook,
        optionUntil: req.optionUntil === undefined ? undefined : timestampDate(req.optionUntil),
      });
      return { reservation: reservationOut(reservation), created };
    },
    async updateReservation(req, ctx) {
      const actor = actorOf(ctx);
      const r = await service.update(actor, req.reservationId, {
        arrivalDate: req.arrivalDate,
        departureDate: req.departureDate,
        holderName: req.holderName,
        notes: req.notes,
        status: bookableStatus(req.status),
        optionUntil: req.optionUntil === undefined ? undefined : timestampDate(req.optionUntil),
        rooms: req.rooms.map((c) => ({
          reservationRoomId: c.reservationRoomId,
          roomTypeId: c.roomTypeId,
          ratePlanId: c.ratePlanId,
          adults: c.adults,
          children: c.children,
          amountMinor: c.amountMinor,
        })),
      });
      return { reservation: reservationOut(r) };
    },
    async setLateCheckOutRule(req, ctx) {
      const actor = actorOf(ctx);
      const rule =
        req.rule === undefined
          ? null
          : { afterHour: req.rule.afterHour, feeKind: req.rule.feeKind as "FIXED", feeValue: req.rule.feeValue };
      const set = await service.setLateCheckOutRule(actor.propertyId, rule, actor.keyed);
      return set === null ? {} : { rule: set };
    },
    async cancelReservation(req, ctx) {
      return {
        reservation: reservationOut(await service.cancel(actorOf(ctx), req.reservationId)),
      };
    },
    async assignRoom(req, ctx) {
      return {
        reservation: reservationOut(
          await service.assignRoom(actorOf(ctx), req.reservationId, req.reservationRoomId, req.roomId),
        ),
      };
    },
    async moveRoom(req, ctx) {
      return {
        reservation: reservationOut(
          await service.moveRoom(actorOf(ctx), req.reservationId, req.reservationRoomId, req.roomId, {
            reprice: req.reprice,
          }),
        ),
      };
    },
    async reinstateReservation(req, ctx) {
      return {
        reservation: reservationOut(await service.reinstate(actorOf(ctx), req.reservationId)),
      };
    },
    async checkInRoomLine(req, ctx) {
      return {
        reservation: reservationOut(
          await service.checkIn(actorOf(ctx), req.reservationId, req.reservationRoomId, req.roomId),
        ),
      };
    },
    async checkOutRoomLine(req, ctx) {
      // settling to the city ledger posts a payment on the folios: the caller needs folio.post as well
      if (req.settleToAccountId !== "" && !holds(requirePrincipal(ctx.values), "folio.post"))
        throw new AppError("forbidden", "Settling folios to an account at check-out needs folio.post.");
      return {
        reservation: reservationOut(
          await service.checkOut(actorOf(ctx), req.reservationId, req.reservationRoomId, {
            settleToAccountId: req.settleToAccountId,
          }),
        ),
      };
    },
    async getReservation(req, ctx) {
      const r = await service.get(actorOf(ctx), req.reservationId);
      return { reservation: reservationOut(r, await lineGuestsFor(lineGuests, requirePrincipal(ctx.values), r)) };
    },
    async listReservations(req, ctx) {
      const actor = actorOf(ctx);
      const statuses = req.statuses.map((s) => statusIn(s)).filter((s): s is ReservationStatus => s !== undefined);
      const page = await service.list(actor, {
        statuses,
        arrivalFrom: req.arrivalFrom === "" ? undefined : req.arrivalFrom,
        arrivalTo: req.arrivalTo === "" ? undefined : req.arrivalTo,
        updatedSince: req.updatedSince === undefined ? undefined : timestampDate(req.updatedSince),
        query: req.query,
        cursor: req.cursor,
        limit: req.limit === 0 ? 100 : req.limit,
      });
      return {
        reservations: page.reservations.map((r) => reservationOut(r)),
        nextCursor: page.nextCursor,
        hasMore: page.hasMore,
      };
    },
    async listOverdueDeposits(req, ctx) {
      const actor = actorOf(ctx);
      const page = await service.listOverdueDeposits(actor, {
        limit: req.limit === 0 ? 100 : req.limit,
        cursor: req.cursor,
      });
      return {
        reservations: page.reservations.map((r) => reservationOut(r)),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
  });
}
