import type { Deps, Module } from "../module.ts";
import { createPlatformSettings } from "../platform/index.ts";
import { createStatusService } from "./status.service.ts";
import { registerStatusRpc, statusRpcServices } from "./status.rpc.ts";

export { CONNECTIVITY_RELEASE } from "./status.service.ts";

export function createStatusModule(deps: Deps): Module {
  const service = createStatusService(createPlatformSettings(deps.db));
  return { name: "status", services: statusRpcServices, registerRpc: (router) => registerStatusRpc(router, service) };
}
