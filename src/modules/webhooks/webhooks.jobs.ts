import type pg from "pg";
import { poolQueryable } from "../../db/queryable.ts";
import { LATENCY_POLL_SECONDS, LATENCY_RETRY, type Boss } from "../../jobs/boss.ts";
import { queues } from "../../jobs/queues.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Mailer } from "../../lib/mail.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { AttemptOutcome } from "./attempt-outcome.ts";
import type { WebhookEngine } from "./engine.ts";
import type { Recoveries } from "./recovery.ts";
import { findPropertyById, findUserById } from "../properties/index.ts";

/**
 * Workers: fan-out of events and attempts of deliveries, both a batch of jobs at a time, the every-minute
 * sweeper (due retries and claims of crashed workers), the daily history purge and the closed-address e-mail.
 * A delivery job's lock (expireInSeconds) outlives the 10 s request timeout; a job lost with its worker is
 * retried by pg-boss and, failing that, picked up by the sweeper once the claim's lease lapses.
 */
export async function registerWebhookWorkers(deps: {
  boss: Boss;
  pool: pg.Pool;
  engine: WebhookEngine;
  recoveries: Recoveries;
  mailer: Mailer;
  logger: Logger;
  metrics?: Metrics | undefined;
}): Promise<void> {
  const { boss, engine, metrics } = deps;
  const observed = async (attempts: Promise<AttemptOutcome[]>): Promise<AttemptOutcome[]> => {
    const done = await attempts;
    metrics?.observeWebhookAttempts(done, new Date());
    return done;
  };
  /**
   * Fan-out and attempts take a batch of jobs into one claim statement and one statement for the batch's
   * successes, with several batches in flight, fetching again at once while batches come back full.
   * A throw fails the whole batch; that is safe because fan-out is idempotent and attempts are claimed.
   */
  const batchPolicy = {
    queue: LATENCY_RETRY,
    notifyPollingIntervalSeconds: LATENCY_POLL_SECONDS,
    localConcurrency: 4,
    burstWhenBatchFull: true,
  };
  await boss.registerBatchWorker<{ eventId: string }>(
    queues.eventsFanout,
    (jobs) => observed(engine.fanOut(jobs.map((j) => j.data.eventId))),
    { ...batchPolicy, batchSize: 20 },
  );
  await boss.registerBatchWorker<{ deliveryId: string }>(
    queues.webhooksDeliver,
    (jobs) => observed(engine.attempt(jobs.map((j) => j.data.deliveryId))),
    { ...batchPolicy, batchSize: 16 },
  );
  await boss.registerWorker(queues.webhooksSweep, async () => engine.sweepDue(), { queue: { retryLimit: 0 } });
  // A recovery's fill is idempotent (one delivery per recovery and event): a run taken over after expiry only
  // adds what the first had not, so the default expiry applies.
  await boss.registerWorker<{ recoveryId: string }>(
    queues.webhooksRecover,
    async (job) => deps.recoveries.fill(job.data.recoveryId),
    {
      queue: { retryLimit: 5, retryDelay: 10, retryBackoff: true },
    },
  );
  await boss.registerWorker(queues.webhooksPurge, async () => engine.purge(), { queue: { retryLimit: 2 } });
  await boss.registerWorker<{ endpointId: string }>(
    queues.webhooksEndpointClosed,
    async (job) => {
      const { rows } = await deps.pool.query<{
        url: string;
        reason: string | null;
        userId: string;
        propertyId: string;
      }>(
        `select ep.url, ep.closed_reason as reason, ep.created_by as "userId", ep.property_id as "propertyId"
         from webhook_endpoints ep where ep.id = $1`,
        [job.data.endpointId],
      );
      const endpoint = rows[0];
      if (endpoint === undefined) return;
      const q = poolQueryable(deps.pool);
      const [user, property] = await Promise.all([
        findUserById(q, endpoint.userId),
        findPropertyById(q, endpoint.propertyId),
      ]);
      if (user === undefined || property === undefined) return;
      const row = { email: user.email, url: endpoint.url, reason: endpoint.reason, code: property.code };
      await deps.mailer.send({
        to: row.email,
        subject: `Webhook address closed (${row.code})`,
        text: `The webhook address ${row.url} of property ${row.code} was closed automatically.\n${row.reason ?? ""}\n\nNo events are sent to it while it is closed. Re-enable it in the panel: Integrations > API access > Webhook addresses.`,
      });
    },
    { queue: { retryLimit: 10, retryDelay: 30, retryBackoff: true } },
  );
  await boss.pgboss.schedule(queues.webhooksSweep, "* * * * *");
  await boss.pgboss.schedule(queues.webhooksPurge, "17 3 * * *");
  deps.logger.debug("webhook workers registered");
}
