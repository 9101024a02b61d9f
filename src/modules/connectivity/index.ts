import type { Deps, Module } from "../module.ts";
import { createRowWriter, LATENCY_POLL_SECONDS, LATENCY_RETRY } from "../../jobs/boss.ts";
import { messageColumns } from "./connectivity.repository.ts";
import { createConnectivityService } from "./connectivity.service.ts";
import { queues } from "../../jobs/queues.ts";
import type { ReservationService } from "../reservations/index.ts";
import type { InventoryService } from "../inventory/index.ts";
import { createAriReads } from "./ari.ts";
import { createAriWrites } from "./ari-write.ts";
import { processPartnerMessages } from "./message-processor.ts";
import { createAnswerCache } from "../../lib/answer-cache.ts";
import { connectivityRpcServices, registerConnectivityRpc } from "./connectivity.rpc.ts";

export { createPartnerSwitchInterceptor } from "./partner-switch.interceptor.ts";

export {
  adapterFor,
  registerAdapter,
  jsonAdapter,
  type ProviderAdapter,
  type InboundPartnerMessage,
} from "./adapters.ts";

// A job held by a worker that died (SIGKILL, lost host) misses its heartbeat and is retried (src/jobs/boss.ts); the
// queue's latency bound is in src/jobs/queues.ts (takeoverBounds).
const MESSAGE_JOB = LATENCY_RETRY;

/** The partner face (its interceptor, the platform switch, is placed by app.ts before authentication). */
export function createConnectivityModule(
  deps: Deps,
  reservations: ReservationService,
  inventory: InventoryService,
): Module {
  const messages = createRowWriter(
    deps.db.pool,
    deps.boss.pgboss,
    { table: "partner_messages", columns: messageColumns, queue: queues.partnerMessages, job: MESSAGE_JOB },
    deps.transact,
  );
  const service = createConnectivityService({
    pool: deps.db.pool,
    messages,
    clock: deps.clock,
    answers: createAnswerCache(deps.config.answerCacheBytes),
  });
  return {
    name: "connectivity",
    services: connectivityRpcServices,
    registerRpc: (router) =>
      registerConnectivityRpc(
        router,
        service,
        createAriReads({ pool: deps.db.pool, inventory }),
        createAriWrites({ pool: deps.db.pool, inventory }),
      ),
    // Jobs carry the (property, external reference) key; the processor drains that key in arrival order.
    startWorkers: () =>
      deps.boss.registerWorker<{ propertyId: string; externalReference: string }>(
        queues.partnerMessages,
        (job) =>
          processPartnerMessages(
            { pool: deps.db.pool, reservations, clock: deps.clock, logger: deps.logger, metrics: deps.metrics },
            job.data.propertyId,
            job.data.externalReference,
          ),
        { queue: MESSAGE_JOB, notifyPollingIntervalSeconds: LATENCY_POLL_SECONDS },
      ),
  };
}
export { setProviderMapping } from "./mappings.admin.ts";
