import type { Deps, Module } from "../module.ts";
import { createPlatformSettings } from "../../db/platform-settings.ts";
import { createRowWriter, JOB_EXPIRY_SECONDS } from "../../jobs/boss.ts";
import { eventColumns } from "./connectivity.repository.ts";
import { createConnectivityService, RESERVATION_EVENTS_QUEUE } from "./connectivity.service.ts";
import { createReservationService } from "../reservations/index.ts";
import { createInventoryService } from "../inventory/index.ts";
import { createAriReads } from "./ari.ts";
import { processReservationEvents } from "./event-processor.ts";
import { connectivityRpcServices, registerConnectivityRpc } from "./connectivity.rpc.ts";
import { createPartnerSwitchInterceptor } from "./partner-switch.interceptor.ts";

export { adapterFor, registerAdapter, jsonAdapter, type ProviderAdapter, type InboundReservationEvent } from "./adapters.ts";
export { RESERVATION_EVENTS_QUEUE } from "./connectivity.service.ts";

// A job held by a worker that died (SIGKILL, lost host) is retried once its lock expires (JOB_EXPIRY_SECONDS), not after pg-boss's 15 min.
const EVENT_JOB = { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: JOB_EXPIRY_SECONDS };

/** The partner face. Its interceptor (the platform switch) must run before authentication. */
export function createConnectivityModule(deps: Deps): Module {
  const events = createRowWriter(deps.db.pool, deps.boss.pgboss, { table: "reservation_events", columns: eventColumns, queue: RESERVATION_EVENTS_QUEUE, job: EVENT_JOB }, deps.transact);
  const service = createConnectivityService({ pool: deps.db.pool, events, clock: deps.clock });
  const reservations = createReservationService({ transact: deps.transact, pool: deps.db.pool, clock: deps.clock });
  return {
    name: "connectivity",
    services: connectivityRpcServices,
    interceptors: [createPartnerSwitchInterceptor(createPlatformSettings(deps.db))],
    registerRpc: (router) => registerConnectivityRpc(router, service, createAriReads({ pool: deps.db.pool, inventory: createInventoryService({ transact: deps.transact, pool: deps.db.pool, clock: deps.clock }) })),
    // Jobs carry the (property, external reference) key; the processor drains that key in arrival order.
    startWorkers: () =>
      deps.boss.registerWorker<{ propertyId: string; externalReference: string }>(
        RESERVATION_EVENTS_QUEUE,
        (job) => processReservationEvents({ pool: deps.db.pool, reservations, clock: deps.clock, logger: deps.logger }, job.data.propertyId, job.data.externalReference),
        { queue: EVENT_JOB },
      ),
  };
}
export { setProviderMapping } from "./mappings.admin.ts";
