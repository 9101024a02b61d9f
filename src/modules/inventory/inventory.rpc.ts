import { keyPageOf, keyPageResult } from "../../lib/page.ts";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { InventoryService as InventoryRpc } from "../../../gen/hotelops/inventory/v1/inventory_pb.js";
import { AppError, invalidField } from "../../errors.ts";
import type { InventoryService } from "./inventory.service.ts";
import {
  boardTypeIn,
  depositIn,
  periodOut,
  policyIn,
  ratePlanOut,
  roomOut,
  roomStatusIn,
} from "./inventory-messages.ts";
import { maxOutOfOrderList } from "./out-of-order.ts";
import { requestProperty } from "../auth/index.ts";
import { keyedOf } from "../../server/context.ts";

/** Most room types, rooms or rate plans one page of their list holds (and its default). */
const maxConfigPage = 500;

export const inventoryRpcServices = [InventoryRpc];

export function registerInventoryRpc(router: ConnectRouter, service: InventoryService): void {
  // The property the request names was checked against the caller's reach by the authentication interceptor.
  /** The named property (configuration RPCs always name it: an empty code is no property). */
  const scope = (ctx: HandlerContext, code: string) => {
    const property = code === "" ? undefined : requestProperty(ctx.values);
    if (property === undefined) throw new AppError("not_found", "No such property.");
    return property.id;
  };
  /** The named property, or a staff session's active property when no code is given (the mobile REST routes). */
  const scopeOrActive = (ctx: HandlerContext) => {
    const property = requestProperty(ctx.values);
    if (property === undefined) throw invalidField("propertyCode", "is required");
    return property.id;
  };
  router.service(InventoryRpc, {
    async createRoomType(req, ctx) {
      const roomType = await service.createRoomType(
        scope(ctx, req.propertyCode),
        {
          code: req.code,
          name: req.name,
          maxOccupancy: req.maxOccupancy,
        },
        keyedOf(ctx),
      );
      return { roomType };
    },
    async listRoomTypes(req, ctx) {
      const page = keyPageOf(req, maxConfigPage, ["text"]);
      const rows = await service.listRoomTypes(scope(ctx, req.propertyCode), page);
      const { items, nextCursor } = keyPageResult(rows, page.limit, (t) => [t.code]);
      return { roomTypes: items, nextCursor };
    },
    async createRoom(req, ctx) {
      const room = await service.createRoom(
        scope(ctx, req.propertyCode),
        {
          number: req.number,
          roomTypeId: req.roomTypeId,
        },
        keyedOf(ctx),
      );
      return { room: roomOut(room) };
    },
    async listRooms(req, ctx) {
      const page = keyPageOf(req, maxConfigPage, ["text"]);
      const rows = await service.listRooms(scope(ctx, req.propertyCode), page);
      const { items, nextCursor } = keyPageResult(rows, page.limit, (r) => [r.number]);
      return { rooms: items.map(roomOut), nextCursor };
    },
    async setRoomStatus(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const room = await service.setRoomStatus(
        propertyId,
        {
          roomId: req.roomId,
          status: roomStatusIn(req.status),
          outOfOrderFrom: req.outOfOrderFrom,
          outOfOrderTo: req.outOfOrderTo,
          reason: req.reason,
        },
        keyedOf(ctx),
      );
      return { room: roomOut(room) };
    },
    async listOutOfOrderPeriods(req, ctx) {
      const page = keyPageOf(req, maxOutOfOrderList, ["date", "text", "uuid"]);
      const rows = await service.listOutOfOrderPeriods(
        scopeOrActive(ctx),
        { roomId: req.roomId, from: req.from, to: req.to },
        page,
      );
      const { items, nextCursor } = keyPageResult(rows, page.limit, (p) => [p.from, p.roomNumber, p.id]);
      return { outOfOrderPeriods: items.map(periodOut), nextCursor };
    },
    async createOutOfOrderPeriod(req, ctx) {
      const period = await service.createOutOfOrderPeriod(
        scopeOrActive(ctx),
        {
          roomId: req.roomId,
          from: req.from,
          to: req.to,
          reason: req.reason,
        },
        keyedOf(ctx),
      );
      return { outOfOrderPeriod: periodOut(period) };
    },
    async updateOutOfOrderPeriod(req, ctx) {
      const propertyId = scopeOrActive(ctx);
      const period = await service.updateOutOfOrderPeriod(
        propertyId,
        req.outOfOrderPeriodId,
        {
          ...(req.from === undefined ? {} : { from: req.from }),
          ...(req.to === undefined ? {} : { to: req.to }),
          ...(req.reason === undefined ? {} : { reason: req.reason }),
        },
        keyedOf(ctx),
      );
      return { outOfOrderPeriod: periodOut(period) };
    },
    async deleteOutOfOrderPeriod(req, ctx) {
      const propertyId = scopeOrActive(ctx);
      const left = await service.deleteOutOfOrderPeriod(propertyId, req.outOfOrderPeriodId, keyedOf(ctx));
      return left === undefined ? {} : { outOfOrderPeriod: periodOut(left) };
    },
    async createRatePlan(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const ratePlan = await service.createRatePlan(
        propertyId,
        {
          code: req.code,
          name: req.name,
          boardType: boardTypeIn(req.boardType),
          roomTypeIds: req.roomTypeIds,
          pricesByOccupancy: req.pricesByOccupancy,
        },
        keyedOf(ctx),
      );
      return { ratePlan: ratePlanOut(ratePlan) };
    },
    async listRatePlans(req, ctx) {
      const page = keyPageOf(req, maxConfigPage, ["text"]);
      const rows = await service.listRatePlans(scope(ctx, req.propertyCode), page);
      const { items, nextCursor } = keyPageResult(rows, page.limit, (p) => [p.code]);
      return { ratePlans: items.map(ratePlanOut), nextCursor };
    },
    async setRatePlanPolicy(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const ratePlan = await service.setRatePlanPolicy(propertyId, req.ratePlanId, policyIn(req.policy), keyedOf(ctx));
      return { ratePlan: ratePlanOut(ratePlan) };
    },
    async setRatePlanOccupancyPricing(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const ratePlan = await service.setRatePlanOccupancyPricing(
        propertyId,
        req.ratePlanId,
        req.pricesByOccupancy,
        keyedOf(ctx),
      );
      return { ratePlan: ratePlanOut(ratePlan) };
    },
    async setRatePlanDeposit(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const ratePlan = await service.setRatePlanDeposit(
        propertyId,
        req.ratePlanId,
        depositIn(req.deposit),
        keyedOf(ctx),
      );
      return { ratePlan: ratePlanOut(ratePlan) };
    },
    async setPrices(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const days = await service.setPrices(
        propertyId,
        {
          ratePlanId: req.ratePlanId,
          roomTypeId: req.roomTypeId,
          from: req.from,
          to: req.to,
          amountMinor: req.amountMinor,
          occupancyPrices: req.occupancyPrices.map((p) => ({ adults: p.adults, priceMinor: p.priceMinor })),
        },
        keyedOf(ctx),
      );
      return { days };
    },
    async createRoomBlock(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const roomBlockId = await service.createRoomBlock(
        propertyId,
        {
          roomTypeId: req.roomTypeId,
          from: req.from,
          to: req.to,
          count: req.count,
          name: req.name,
        },
        keyedOf(ctx),
      );
      return { roomBlockId };
    },
    async setRestrictions(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const cells = await service.setRestrictions(
        propertyId,
        {
          ratePlanIds: req.ratePlanIds,
          roomTypeIds: req.roomTypeIds,
          from: req.from,
          to: req.to,
          weekdays: req.weekdays,
          minStay: req.minStay,
          maxStay: req.maxStay,
          closedToArrival: req.closedToArrival,
          closedToDeparture: req.closedToDeparture,
          stopSell: req.stopSell,
        },
        keyedOf(ctx),
      );
      return { cells };
    },
    async setAvailabilityCaps(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const days = await service.setAvailabilityCaps(
        propertyId,
        {
          roomTypeIds: req.roomTypeIds,
          from: req.from,
          to: req.to,
          weekdays: req.weekdays,
          availabilityCap: req.availabilityCap,
        },
        keyedOf(ctx),
      );
      return { days };
    },
    async getAri(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const ari = await service.getAri(propertyId, {
        from: req.from,
        to: req.to,
        ...(req.roomTypeIds.length > 0 ? { roomTypeIds: req.roomTypeIds } : {}),
        ...(req.ratePlanIds.length > 0 ? { ratePlanIds: req.ratePlanIds } : {}),
        cursor: req.cursor,
      });
      return {
        from: req.from,
        to: req.to,
        currency: ari.currency,
        amountScale: ari.amountScale,
        roomTypes: ari.roomTypes.map((rt) => ({
          roomTypeId: rt.id,
          code: rt.code,
          ratePlans: rt.ratePlans.map((rp) => ({ ratePlanId: rp.id, code: rp.code, days: rp.days })),
        })),
        nextCursor: ari.nextCursor,
        hasMore: ari.nextCursor !== "",
      };
    },
    async getAvailability(req, ctx) {
      const propertyId = scope(ctx, req.propertyCode);
      const roomTypes = await service.getAvailability(propertyId, {
        from: req.from,
        to: req.to,
        roomTypeCodes: req.roomTypeCodes,
      });
      return { from: req.from, to: req.to, roomTypes };
    },
  });
}
