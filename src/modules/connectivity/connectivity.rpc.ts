import type { ConnectRouter } from "@connectrpc/connect";
import { ConnectivityService as ConnectivityRpc } from "../../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { principalKey } from "../auth/principal.ts";
import type { ConnectivityService } from "./connectivity.service.ts";

export const connectivityRpcServices = [ConnectivityRpc];

export function registerConnectivityRpc(router: ConnectRouter, service: ConnectivityService): void {
  router.service(ConnectivityRpc, {
    async createReservationEvent(req, ctx) {
      const { propertyCode, holder, rooms, ...rest } = req;
      const payload = { ...rest, holder: { name: holder?.name ?? "" }, rooms: rooms.map((r) => ({ ...r, amountMinor: Number(r.amountMinor) })), totalMinor: Number(req.totalMinor) };
      return service.queueReservationEvent(ctx.values.get(principalKey), propertyCode, payload);
    },
    async getReservationEvent(req, ctx) {
      const e = await service.getReservationEvent(ctx.values.get(principalKey), req.propertyCode, req.eventId);
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
