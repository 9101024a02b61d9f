import type { ConnectRouter } from "@connectrpc/connect";
import { StatusService as StatusRpc } from "../../../gen/hotelops/status/v1/status_pb.js";
import type { StatusService } from "./status.service.ts";

export const statusRpcServices = [StatusRpc];

export function registerStatusRpc(router: ConnectRouter, service: StatusService): void {
  router.service(StatusRpc, {
    getStatus: () => service.getStatus(),
  });
}
