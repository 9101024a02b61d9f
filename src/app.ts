import type { Config } from "./config.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { openDatabase, type Database } from "./db/index.ts";
import { createTransact } from "./db/transaction.ts";
import { startBoss, type Boss } from "./jobs/boss.ts";
import { createGateway, type Gateway } from "./gateway/index.ts";
import { createClientAddress, parseTrustedProxies } from "./server/client-address.ts";
import { createCors } from "./server/cors.ts";
import { createDispatcher } from "./server/dispatch.ts";
import { createCallInterceptor } from "./server/interceptors.ts";
import { createRecordingRouter } from "./server/calls.ts";
import { listen, type Listener } from "./server/listen.ts";
import { registerHealth } from "./server/health.ts";
import { registerReflection } from "./server/reflection.ts";
import type { Deps, Module } from "./modules/module.ts";
import { createStatusModule } from "./modules/status/index.ts";
import { createConnectivityModule } from "./modules/connectivity/index.ts";
import { createAuthModule } from "./modules/auth/index.ts";
import { createAdminModule } from "./modules/admin/index.ts";
import { createPlatformModule } from "./modules/platform/index.ts";
import { createWebhooksModule, type WebhookOptions } from "./modules/webhooks/index.ts";
import { createFolioModule, createFolioServices } from "./modules/folio/module.ts";
import { createInventoryModule } from "./modules/inventory/index.ts";
import { createReservationService, createReservationsModule } from "./modules/reservations/index.ts";
import { createIdentityModule, MAX_IMAGE_BYTES } from "./modules/identity/index.ts";
import { createMobileModule } from "./modules/mobile/index.ts";
import { createMetrics, type Metrics } from "./observability/metrics.ts";
import { startMetricsServer } from "./observability/metrics-server.ts";
import { startTracing, type Tracing } from "./observability/tracing.ts";

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** Test seams of the webhook engine (DNS resolver, request timeout, jitter, mailer). */
  webhooks?: WebhookOptions;
}

export interface App {
  config: Config;
  deps: Deps;
  db: Database;
  boss: Boss;
  /** The REST route table (undefined for ROLE=worker). */
  gateway: Gateway | undefined;
  /** The port the API listens on (undefined for ROLE=worker). */
  port: number | undefined;
  clock: Clock;
  logger: Logger;
  /** Prometheus metrics of this process (undefined with METRICS=off). */
  metrics: Metrics | undefined;
  /** Undefined without OTEL_EXPORTER_OTLP_ENDPOINT. */
  tracing: Tracing | undefined;
  /** The port of METRICS_PORT's server, when one was asked for. */
  metricsPort: number | undefined;
  close(): Promise<void>;
}

/** The modules of the service, in interceptor order. Add a module here and nowhere else. */
function createModules(deps: Deps, options: AppOptions = {}): Module[] {
  // the night audit marks no-shows through the reservations service, inside the audit's transaction
  const folio = createFolioServices(deps, { markNoShow: createReservationService({ transact: deps.transact, pool: deps.db.pool, clock: deps.clock }).markNoShowInTx });
  const identity = createIdentityModule(deps);
  return [
    createStatusModule(deps),
    // before auth: the platform-wide partner API switch answers 503 without authentication work
    createConnectivityModule(deps),
    // authentication and authorization of every call; later interceptors read its principal
    createAuthModule(deps),
    createAdminModule(deps),
    // after auth: the platform interceptors read the principal the auth module resolves
    createPlatformModule(deps),
    createWebhooksModule(deps, options.webhooks),
    createInventoryModule(deps),
    createReservationsModule(deps),
    createFolioModule(deps, folio),
    // mobile identity-document scan (OCR worker thread, started on first use)
    identity,
    // MobileService (one registration: the identity scan part spread in)
    createMobileModule(deps, { nightAudit: folio.nightAudit, parts: identity.mobileRpc }),
  ];
}

/** The composition root: builds every object by hand, in dependency order, and nothing else. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const tracing = startTracing(config.otlpEndpoint, config.serviceName);
  const db = await openDatabase(config, logger);
  const metrics = config.metrics.enabled ? createMetrics(db.pool) : undefined;
  metrics?.instrumentPool("main", db.pool);
  const telemetry = { tracer: tracing?.tracer, ...(metrics ? { onFailure: metrics.jobFailed } : {}) };
  const boss = await startBoss({ url: db.sessionUrl, role: config.role, logger, graceMs: config.shutdownGraceMs, telemetry });
  const deps: Deps = { config, db, boss, transact: createTransact(db.orm, boss.pgboss), clock, logger, metrics };
  const modules = createModules(deps, options);
  for (const m of modules) await m.startWorkers?.();

  let listener: Listener | undefined;
  let gateway: Gateway | undefined;
  if (config.role !== "worker") {
    const interceptors = [createCallInterceptor(logger, { metrics, tracing }), ...modules.flatMap((m) => m.interceptors ?? [])];
    const router = createRecordingRouter({ interceptors, readMaxBytes: config.maxBodyBytes });
    for (const m of modules) m.registerRpc?.(router);
    const served = modules.flatMap((m) => m.services ?? []);
    registerReflection(router, served);
    registerHealth(router, served, db.readiness);
    gateway = createGateway({ ...router.direct, maxBodyBytes: config.maxBodyBytes, maxFileBytes: MAX_IMAGE_BYTES, refuseAnonymousBeforeBody: true });
    const clientAddress = createClientAddress(parseTrustedProxies(config.trustedProxies) ?? []);
    const onMainPort = metrics !== undefined && config.metrics.port === undefined ? { render: metrics.render, contentType: metrics.contentType, token: config.metrics.token } : undefined;
    const dispatcher = createDispatcher({ handlers: router.handlers, gateway, ready: db.readiness, logger, clientAddress, cors: createCors(config.corsOrigins), metrics: onMainPort });
    listener = await listen(dispatcher, { port: config.port, host: config.host, tls: config.tls, limits: config.connections });
  }
  const metricsServer = metrics !== undefined && config.metrics.port !== undefined ? await startMetricsServer(metrics, { port: config.metrics.port, host: config.host, token: config.metrics.token }) : undefined;

  return {
    config,
    deps,
    db,
    boss,
    gateway,
    port: listener?.port,
    clock,
    logger,
    metrics,
    tracing,
    metricsPort: metricsServer?.port,
    async close() {
      await listener?.close(config.shutdownGraceMs);
      await metricsServer?.close();
      // Jobs drain first: a module's resources (the webhook sender's connections) may be in use by a running job.
      await boss.stop();
      for (const m of modules) await m.stop?.();
      await db.close();
      await tracing?.shutdown();
    },
  };
}
