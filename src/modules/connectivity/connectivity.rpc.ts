import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectivityService as ConnectivityRpc } from "../../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { principalKey, requestProperty, type PropertyRef } from "../auth/index.ts";
import { AppError } from "../../errors.ts";
import { client, type ConnectivityService } from "./connectivity.service.ts";
import type { AriReads } from "./ari.ts";
import type { AriWrites } from "./ari-write.ts";
import { answerList } from "../../lib/lazy-list.ts";
import type { PartnerCallbackReads } from "./callbacks.ts";
import { keyedOf } from "../../server/context.ts";

export const connectivityRpcServices = [ConnectivityRpc];

export function registerConnectivityRpc(
  router: ConnectRouter,
  service: ConnectivityService,
  ari: AriReads,
  ariWrites: AriWrites,
  callbacks: PartnerCallbackReads,
): void {
  const ts = (d: Date | null) => (d === null ? undefined : timestampFromDate(d));
  const opt = <T>(v: T | undefined | null) => (v === undefined || v === null ? undefined : v);
  /** The property the request names, checked against the caller's reach by the authentication interceptor. */
  const named = (ctx: HandlerContext): PropertyRef => {
    const property = requestProperty(ctx.values);
    if (property === undefined) throw new AppError("not_found", "No such property.");
    return property;
  };
  router.service(ConnectivityRpc, {
    getCapabilities: (_req, ctx) => service.capabilities(ctx.values.get(principalKey)),
    // the service's answer as it is (a cached answer is shared: never copied or changed here)
    getAvailability: (req, ctx) =>
      service.availability(ctx.values.get(principalKey), named(ctx), req.from, req.to, req.roomTypes),
    async listReservations(req, ctx) {
      const page = await service.reservationsFeed(ctx.values.get(principalKey), named(ctx), {
        cursor: req.cursor,
        updatedSince: req.updatedSince ? timestampDate(req.updatedSince) : undefined,
        limit: req.limit,
      });
      return {
        ...page,
        data: page.data.map((r) => ({
          ...r,
          externalReference: opt(r.externalReference),
          channel: opt(r.channel),
          cancelledAt: ts(r.cancelledAt),
          createdAt: ts(r.createdAt),
          updatedAt: ts(r.updatedAt),
          roomTypeCodes: r.roomTypeCodes.map((c) => ({ code: c.code, externalCode: opt(c.externalCode) })),
        })),
      };
    },
    async getMappings(req, ctx) {
      const m = await service.mappings(ctx.values.get(principalKey), named(ctx));
      return {
        property: { code: m.property.code, externalCode: opt(m.property.externalCode) },
        roomTypes: m.roomTypes.map((x) => ({ ...x, externalCode: opt(x.externalCode) })),
        ratePlans: m.ratePlans.map((x) => ({ ...x, externalCode: opt(x.externalCode) })),
      };
    },
    async createReservationEvent(req, ctx) {
      const { propertyCode: _code, holder, rooms, paymentGuarantee, ...rest } = req;
      const payload = {
        ...rest,
        holder: { name: holder?.name ?? "" },
        rooms: rooms.map((r) => ({
          roomTypeCode: r.roomTypeCode,
          ratePlanCode: r.ratePlanCode,
          adults: r.adults,
          children: r.children,
          amountMinor: Number(r.amountMinor),
          nightlyPrices: r.nightlyPrices.map((n) => ({ date: n.date, amountMinor: Number(n.amountMinor) })),
          guests: r.guests.map((g) => ({ name: g.name })),
        })),
        totalMinor: Number(req.totalMinor),
        paymentGuarantee:
          paymentGuarantee === undefined
            ? null
            : { token: paymentGuarantee.token, cardType: paymentGuarantee.cardType, issuer: paymentGuarantee.issuer },
      };
      return service.queueReservationEvent(ctx.values.get(principalKey), named(ctx), payload, keyedOf(ctx));
    },
    async getAri(req, ctx) {
      const a = await ari.ari(client(ctx.values.get(principalKey)), named(ctx), {
        from: req.from,
        to: req.to,
        roomTypes: req.roomTypes,
        ratePlans: req.ratePlans,
        cursor: req.cursor,
      });
      return { ...a, roomTypes: answerList(ctx, a.roomTypes) };
    },
    updateAri: (req, ctx) =>
      ariWrites.update(
        client(ctx.values.get(principalKey)),
        named(ctx),
        req.changes.map((c) => ({
          roomTypeCode: c.roomTypeCode,
          ratePlanCode: c.ratePlanCode,
          from: c.from,
          to: c.to,
          weekdays: c.weekdays,
          priceMinor: c.priceMinor,
          occupancyPrices: c.occupancyPrices.map((p) => ({ adults: p.adults, priceMinor: p.priceMinor })),
          minStay: c.minStay,
          maxStay: c.maxStay,
          closedToArrival: c.closedToArrival,
          closedToDeparture: c.closedToDeparture,
          stopSell: c.stopSell,
          availabilityCap: c.availabilityCap,
        })),
        keyedOf(ctx),
      ),
    async listAriChanges(req, ctx) {
      const page = await ari.changes(client(ctx.values.get(principalKey)), named(ctx), {
        cursor: req.cursor,
        updatedSince: req.updatedSince ? timestampDate(req.updatedSince) : undefined,
        limit: req.limit,
      });
      const pairs = (xs: { code: string; externalCode: string | undefined }[]) =>
        xs.map((x) => ({ code: x.code, externalCode: opt(x.externalCode) }));
      return {
        ...page,
        data: page.data.map((c) => ({
          ...c,
          roomTypes: pairs(c.roomTypes),
          ratePlans: pairs(c.ratePlans),
          changedAt: ts(c.changedAt),
        })),
      };
    },
    async listCallbackDeliveries(req, ctx) {
      // The rule admits partner principals only; the history is the caller's own addresses.
      const page = await callbacks.history(client(ctx.values.get(principalKey)).clientId, {
        cursor: req.cursor,
        limit: req.limit,
        eventType: req.eventType,
      });
      return {
        data: page.deliveries.map((a) => ({
          ...a,
          httpStatus: opt(a.httpStatus),
          errorClass: opt(a.errorClass),
          errorMessage: opt(a.errorMessage),
          startedAt: ts(a.startedAt),
          finishedAt: ts(a.finishedAt),
        })),
        nextCursor: page.nextCursor,
        hasMore: page.nextCursor !== "",
      };
    },
    async getReservationEvent(req, ctx) {
      const e = await service.getReservationEvent(ctx.values.get(principalKey), named(ctx), req.eventId);
      return {
        eventId: e.id,
        status: e.status,
        ...(e.reservationId !== null ? { reservationId: e.reservationId } : {}),
        ...(e.reservationCode !== null ? { reservationCode: e.reservationCode } : {}),
        ...(e.error !== null ? { error: e.error } : {}),
      };
    },
  });
}
