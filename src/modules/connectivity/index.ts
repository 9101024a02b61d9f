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
import { keyedSerializer } from "../../lib/limit.ts";
import type { Config } from "../../config.ts";
import { createAnswerCache } from "../../lib/answer-cache.ts";
import { connectivityRpcServices, registerConnectivityRpc } from "./connectivity.rpc.ts";
import { createOtaEndpoints } from "./ota/endpoints.ts";
import { createAriPusher, type AriPushOptions } from "./ari-push.ts";
import type { PartnerCallbackReads } from "./callbacks.ts";

export { createPartnerSwitchInterceptor } from "./partner-switch.interceptor.ts";
export { ariPushCellsPerMessage, type AriPushOptions } from "./ari-push.ts";
export type { PartnerCallbackReads } from "./callbacks.ts";
export { createPartnerRoomTypeCodes } from "./partner-codes.ts";

// A job held by a worker that died (SIGKILL, lost host) misses its heartbeat and is retried (src/jobs/boss.ts); the
// queue's latency bound is in src/jobs/queues.ts (takeoverBounds).
const MESSAGE_JOB = LATENCY_RETRY;

/**
 * Bookings drained at once by one process: WORKER_CONCURRENCY, at most what the pool holds (each drain holds its
 * booking lock on one connection and applies the messages on another; two connections stay for pg-boss).
 */
function workerConcurrencyOf(config: Pick<Config, "workerConcurrency" | "databasePoolMax">): number {
  return Math.max(1, Math.min(config.workerConcurrency, Math.floor((config.databasePoolMax - 2) / 2)));
}

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
    replicaReads: deps.db.replicaReads,
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
    // Jobs carry the (property, external reference) key; the processor drains that key in arrival order. A batch of
    // jobs is taken at once and its distinct keys are drained side by side (WORKER_CONCURRENCY at a time, each on at
    // most two pooled connections); jobs of a key already being drained in this process wait for it, and jobs of a
    // key whose drain has not started yet join that drain. Across processes the booking lock keeps one drain per key.
    startWorkers: async () => {
      const concurrency = workerConcurrencyOf(deps.config);
      const drain = keyedSerializer(concurrency);
      const processor = {
        pool: deps.db.pool,
        transact: deps.transact,
        reservations,
        clock: deps.clock,
        logger: deps.logger,
        metrics: deps.metrics,
      };
      await deps.boss.registerBatchWorker<{ propertyId: string; externalReference: string }>(
        queues.partnerMessages,
        async (jobs) => {
          const keys = new Map(jobs.map((j) => [`${j.data.propertyId}:${j.data.externalReference}`, j.data]));
          const drained = await Promise.allSettled(
            [...keys].map(([key, data]) =>
              drain(key, () => processPartnerMessages(processor, data.propertyId, data.externalReference)),
            ),
          );
          // every key of the batch was tried; a failure fails the batch and pg-boss retries its jobs (a retried job
          // of a drained key finds nothing queued)
          const failed = drained.find((d) => d.status === "rejected");
          if (failed !== undefined) throw failed.reason;
        },
        // two batches in flight, so one slow booking does not hold up the next batch
        {
          queue: MESSAGE_JOB,
          batchSize: concurrency * 2,
          localConcurrency: 2,
          burstWhenBatchFull: true,
          notifyPollingIntervalSeconds: LATENCY_POLL_SECONDS,
        },
      );
      // ari.updated: the ARI feed pushed to partners' callbacks (processes that run jobs; one pusher per property at a
      // time), never in an API-only process
      if (deps.config.role !== "api") pusher.start();
    },
    stop: () => pusher.stop(),
  };
}
export { setProviderMapping } from "./mappings.admin.ts";
