import type { Deps, Module } from "../module.ts";
import { createRowWriter, JOB_EXPIRY_SECONDS } from "../../jobs/boss.ts";
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
import { createOtaEndpoints } from "./ota/endpoints.ts";
import { createAriPusher, type AriPushOptions } from "./ari-push.ts";
import type { PartnerCallbackReads } from "./callbacks.ts";

export { createPartnerSwitchInterceptor } from "./partner-switch.interceptor.ts";
export { ariPushCellsPerMessage, ariPushWindowMs, type AriPushOptions, type AriCell } from "./ari-push.ts";
export type { PartnerCallbackReads } from "./callbacks.ts";

export {
  adapterFor,
  registerAdapter,
  jsonAdapter,
  type ProviderAdapter,
  type InboundPartnerMessage,
} from "./adapters.ts";

// A job held by a worker that died (SIGKILL, lost host) misses its heartbeat and is retried (src/jobs/boss.ts).
const MESSAGE_JOB = { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: JOB_EXPIRY_SECONDS };

/** The partner face (its interceptor, the platform switch, is placed by app.ts before authentication). */
export function createConnectivityModule(
  deps: Deps,
  reservations: ReservationService,
  inventory: InventoryService,
  callbacks: PartnerCallbackReads,
  ariPush: AriPushOptions = {},
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
  const pusher = createAriPusher({
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    logger: deps.logger,
    inventory,
    listeners: (propertyIds) => callbacks.listeners("ari.updated", propertyIds),
    options: ariPush,
  });
  return {
    name: "connectivity",
    services: connectivityRpcServices,
    xmlEndpoints: [
      createOtaEndpoints({
        pool: deps.db.pool,
        clock: deps.clock,
        apply: (propertyId, externalReference) =>
          processPartnerMessages(
            { pool: deps.db.pool, transact: deps.transact, reservations, clock: deps.clock, logger: deps.logger },
            propertyId,
            externalReference,
          ),
      }),
    ],
    registerRpc: (router) =>
      registerConnectivityRpc(
        router,
        service,
        createAriReads({ pool: deps.db.pool, inventory }),
        createAriWrites({ pool: deps.db.pool, inventory }),
        callbacks,
      ),
    // Jobs carry the (property, external reference) key; the processor drains that key in arrival order.
    startWorkers: async () => {
      await deps.boss.registerWorker<{ propertyId: string; externalReference: string }>(
        queues.partnerMessages,
        (job) =>
          processPartnerMessages(
            { pool: deps.db.pool, transact: deps.transact, reservations, clock: deps.clock, logger: deps.logger },
            job.data.propertyId,
            job.data.externalReference,
          ),
        { queue: MESSAGE_JOB },
      );
      // ari.updated: the ARI feed pushed to partners' callbacks (worker processes; one pusher per property at a time)
      pusher.start();
    },
    stop: () => pusher.stop(),
  };
}
export { setProviderMapping } from "./mappings.admin.ts";
