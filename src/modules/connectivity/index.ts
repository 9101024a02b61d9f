import type { Deps, Module } from "../module.ts";
import { createPlatformSettings } from "../../db/platform-settings.ts";
import { createConnectivityService, RESERVATION_EVENTS_QUEUE } from "./connectivity.service.ts";
import { connectivityRpcServices, registerConnectivityRpc } from "./connectivity.rpc.ts";
import { createPartnerSwitchInterceptor } from "./partner-switch.interceptor.ts";

export { adapterFor, registerAdapter, jsonAdapter, type ProviderAdapter, type InboundReservationEvent } from "./adapters.ts";
export { RESERVATION_EVENTS_QUEUE } from "./connectivity.service.ts";

/** The partner face. Its interceptor (the platform switch) must run before authentication. */
export function createConnectivityModule(deps: Deps): Module {
  const service = createConnectivityService({ pool: deps.db.pool, transact: deps.transact, clock: deps.clock });
  return {
    name: "connectivity",
    services: connectivityRpcServices,
    interceptors: [createPartnerSwitchInterceptor(createPlatformSettings(deps.db))],
    registerRpc: (router) => registerConnectivityRpc(router, service),
    // The queue must exist before the first event is sent. Jobs wait in it until the worker that applies events
    // through the reservations core is registered; nothing is consumed (or lost) before that.
    startWorkers: () => deps.boss.pgboss.createQueue(RESERVATION_EVENTS_QUEUE, { notify: true }),
  };
}
export { setProviderMapping } from "./mappings.admin.ts";
