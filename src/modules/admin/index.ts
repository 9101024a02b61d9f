import type { Module } from "../module.ts";
import type { AdminService } from "./admin.service.ts";
import { adminRpcServices, registerAdminRpc } from "./admin.rpc.ts";

export { createAdminService, dateIn, ADMIN_SCOPE, type AdminService } from "./admin.service.ts";

/** hotelops.admin.v1.AdminService for internal clients with the "admin" scope. */
export function createAdminModule(service: AdminService): Module {
  return { name: "admin", services: adminRpcServices, registerRpc: (router) => registerAdminRpc(router, service) };
}
