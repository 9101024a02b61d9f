import type { Deps, Module } from "../module.ts";
import { createAdminService } from "./admin.service.ts";
import { adminRpcServices, registerAdminRpc } from "./admin.rpc.ts";

export { createAdminService, dateIn, ADMIN_SCOPE, type AdminService, type CreateClientInput, type CreatePropertyInput, type MembershipResult } from "./admin.service.ts";

/** hotelops.admin.v1.AdminService for internal clients with the "admin" scope. */
export function createAdminModule(deps: Deps): Module {
  const service = createAdminService(deps);
  return { name: "admin", services: adminRpcServices, registerRpc: (router) => registerAdminRpc(router, service) };
}
