import { readFileSync } from "node:fs";
import type { Deps, Module } from "../module.ts";
import { createMailer, type Mailer } from "../../lib/mail.ts";
import { createNotificationsService } from "../notifications/index.ts";
import { systemResolver, type Resolver } from "./address.ts";
import type { PartnerRoomTypeCodes } from "./attempt-request.ts";
import { createWebhookEngine, type WebhookEngine } from "./engine.ts";
import { createDeliveryDispatcher } from "./dispatcher.ts";
import { createRecoveries } from "./recovery.ts";
import { retryDelaysMs, type Random } from "./schedule.ts";
import { createPacing } from "./pacing.ts";
import { createSecretBox, loadSecretKey } from "./secrets.ts";
import { createSender, type Sender } from "./sender.ts";
import { withAttemptSpans } from "./sender-spans.ts";
import { createWebhooksService, type WebhooksService } from "./webhooks.service.ts";
import { registerWebhookWorkers } from "./webhooks.jobs.ts";
import { registerWebhookRpc, webhookRpcServices } from "./webhooks.rpc.ts";
import { createPartnerCallbacks, type PartnerCallbacks } from "./partner-callbacks.ts";

export { systemResolver, type Resolver } from "./address.ts";
export type { PartnerRoomTypeCodes } from "./attempt-request.ts";
export { type CallbackDelivery } from "./partner-callbacks.ts";
export { partnerCallbackEventTypes } from "./event-types.ts";

/** Test seams of the webhook engine; production uses the defaults. */
export interface WebhookOptions {
  resolver?: Resolver;
  /** Total request budget (default 10 s). */
  timeoutMs?: number;
  random?: Random;
  mailer?: Mailer;
  /** How long a claimed attempt is held (default 25 s: twice the longest attempt, a 2 s start slot and a 10 s request). */
  leaseMs?: number;
  /** Retry delays; default the production schedule (about 30 s ... 12 h). A real-clock test sets a short one. */
  retryDelaysMs?: readonly number[];
  /**
   * Whether worker processes run the wall-clock dispatcher (default true). Tests that move a manual clock and
   * run due work by hand turn it off so it does not take their attempts first.
   */
  dispatch?: boolean;
}

export interface WebhooksModule extends Module {
  engine: WebhookEngine;
  service: WebhooksService;
  sender: Sender;
  /** Partner clients' callback addresses (the panel, the ops CLI, the partner's delivery history, the ARI push). */
  callbacks: PartnerCallbacks;
}

/**
 * The engine and panel service on one set of deps (tests build a second one to drive due work by hand).
 * `partnerCodes` names a booking's room types in a partner client's codes for its callback addresses.
 */
export function createWebhookParts(deps: Deps, partnerCodes: PartnerRoomTypeCodes, options: WebhookOptions = {}) {
  const box = createSecretBox(loadSecretKey(deps.config.webhookSecretKey, deps.config.dataDir));
  const extraCa =
    deps.config.webhookExtraCaFile === undefined ? undefined : readFileSync(deps.config.webhookExtraCaFile, "utf8");
  const sender = withAttemptSpans(createSender({ extraCa }));
  const resolver = options.resolver ?? systemResolver;
  const policy = { allowPrivate: deps.config.webhookAllowPrivateTargets };
  // The lease is how soon the attempt of a worker that died is taken over; one that outlives it is still fenced
  // (the taker records it as interrupted and owns the delivery).
  const leaseMs = options.leaseMs ?? 25_000;
  // Start slots up to 2 s ahead; permits expire with the claim's lease (a dead process frees them).
  const pacing = createPacing(deps.db.pool, { horizonMs: 2_000, holdMs: leaseMs });
  const wake = { fn: (_at: Date): void => undefined };
  const engine = createWebhookEngine({
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    logger: deps.logger,
    box,
    sender,
    resolver,
    policy,
    random: options.random ?? Math.random,
    timeoutMs: options.timeoutMs ?? 10_000,
    leaseMs,
    schedule: options.retryDelaysMs ?? retryDelaysMs,
    pacing,
    onScheduled: (at) => wake.fn(at),
    partnerCodes,
  });
  // The dispatcher's attempts (retries, deferred, recoveries) are counted like the job-driven ones.
  const attempt = async (ids: readonly string[]) => {
    const done = await engine.attempt(ids);
    deps.metrics?.observeWebhookAttempts(done, new Date());
    return done;
  };
  const dispatcher = createDeliveryDispatcher({
    pool: deps.db.pool,
    clock: deps.clock,
    logger: deps.logger,
    attempt,
    pollMs: 1_000,
  });
  wake.fn = () => dispatcher.wake();
  const recoveries = createRecoveries({
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    wake: () => dispatcher.wake(),
  });
  const service = createWebhooksService({
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    box,
    resolver,
    policy,
    engine,
    recoveries,
  });
  const callbacks = createPartnerCallbacks({
    pool: deps.db.pool,
    transact: deps.transact,
    clock: deps.clock,
    box,
    resolver,
    policy,
  });
  return {
    engine,
    service,
    sender,
    dispatcher,
    recoveries,
    callbacks,
    mailer: options.mailer ?? createMailer(deps.config),
  };
}

export function createWebhooksModule(
  deps: Deps,
  partnerCodes: PartnerRoomTypeCodes,
  options: WebhookOptions = {},
): WebhooksModule {
  const { engine, service, sender, dispatcher, recoveries, callbacks, mailer } = createWebhookParts(
    deps,
    partnerCodes,
    options,
  );
  const dispatches = deps.config.role !== "api" && options.dispatch !== false;
  const notifications = createNotificationsService({ pool: deps.db.pool, clock: deps.clock });
  return {
    name: "webhooks",
    engine,
    service,
    sender,
    callbacks,
    services: webhookRpcServices,
    registerRpc: (router) => registerWebhookRpc(router, service, notifications, callbacks),
    startWorkers: async () => {
      await registerWebhookWorkers({
        boss: deps.boss,
        pool: deps.db.pool,
        engine,
        recoveries,
        mailer,
        logger: deps.logger,
        metrics: deps.metrics,
      });
      if (dispatches) dispatcher.start();
    },
    // The dispatcher, then the kept-alive connections to receivers (app.close() stops modules after pg-boss drained the jobs).
    stop: async () => {
      await dispatcher.stop();
      await sender.close();
    },
  };
}
