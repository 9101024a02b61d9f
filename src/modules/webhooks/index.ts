import { readFileSync } from "node:fs";
import type { Deps, Module } from "../module.ts";
import { createMailer, type Mailer } from "../../lib/mail.ts";
import { createNotificationsService } from "../notifications/index.ts";
import { systemResolver, type Resolver } from "./address.ts";
import { createWebhookEngine, type WebhookEngine } from "./engine.ts";
import type { Random } from "./schedule.ts";
import { createSecretBox, loadSecretKey } from "./secrets.ts";
import { createSender, type Sender } from "./sender.ts";
import { withAttemptSpans } from "./sender-spans.ts";
import { createWebhooksService, type WebhooksService } from "./webhooks.service.ts";
import { registerWebhookWorkers } from "./webhooks.jobs.ts";
import { registerWebhookRpc, webhookRpcServices } from "./webhooks.rpc.ts";

export { AddressRejected, checkUrlSyntax, ipVerdict, verifyTarget, systemResolver, type Resolver, type ResolvedAddress } from "./address.ts";
export { signatureHeader, newSigningSecret } from "./secrets.ts";
export { subscribableEventTypes, testEventType } from "./event-types.ts";
export { retryDelaysMs, maxAttempts, nextAttemptAt } from "./schedule.ts";
export type { WebhookEngine, AttemptOutcome } from "./engine.ts";
export type { WebhooksService, Actor } from "./webhooks.service.ts";

/** Test seams of the webhook engine; production uses the defaults. */
export interface WebhookOptions {
  resolver?: Resolver;
  /** Total request budget (default 10 s). */
  timeoutMs?: number;
  random?: Random;
  mailer?: Mailer;
  /** How long a claimed attempt is held (default 60 s, beyond the request timeout). */
  leaseMs?: number;
}

export interface WebhooksModule extends Module {
  engine: WebhookEngine;
  service: WebhooksService;
  sender: Sender;
}

/** The engine and panel service on one set of deps (tests build a second one to drive due work by hand). */
export function createWebhookParts(deps: Deps, options: WebhookOptions = {}) {
  const box = createSecretBox(loadSecretKey(deps.config.webhookSecretKey, deps.config.dataDir));
  const extraCa = deps.config.webhookExtraCaFile === undefined ? undefined : readFileSync(deps.config.webhookExtraCaFile, "utf8");
  const sender = withAttemptSpans(createSender({ extraCa }));
  const resolver = options.resolver ?? systemResolver;
  const policy = { allowPrivate: deps.config.webhookAllowPrivateTargets };
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
    leaseMs: options.leaseMs ?? 60_000,
  });
  const service = createWebhooksService({ pool: deps.db.pool, transact: deps.transact, clock: deps.clock, box, resolver, policy, engine });
  return { engine, service, sender, mailer: options.mailer ?? createMailer(deps.config) };
}

export function createWebhooksModule(deps: Deps, options: WebhookOptions = {}): WebhooksModule {
  const { engine, service, sender, mailer } = createWebhookParts(deps, options);
  const notifications = createNotificationsService({ pool: deps.db.pool, clock: deps.clock });
  return {
    name: "webhooks",
    engine,
    service,
    sender,
    services: webhookRpcServices,
    registerRpc: (router) => registerWebhookRpc(router, service, notifications),
    startWorkers: () => registerWebhookWorkers({ boss: deps.boss, pool: deps.db.pool, engine, mailer, logger: deps.logger, runsJobs: deps.config.role !== "api", metrics: deps.metrics }),
    // The kept-alive connections to receivers (app.close() stops modules after pg-boss drained the jobs).
    stop: () => sender.close(),
  };
}
