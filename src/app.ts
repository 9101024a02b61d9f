import type { Config } from "./config.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { openDatabase, type Database } from "./db/index.ts";
import { createTransact } from "./db/transaction.ts";
import { startBoss, type Boss } from "./jobs/boss.ts";
import { startApiServer } from "./api-server.ts";
import type { Gateway } from "./gateway/index.ts";
import type { Listener } from "./server/listen.ts";
import { createCallInterceptor } from "./server/interceptors.ts";
import type { Interceptor } from "@connectrpc/connect";
import type { Deps, Module } from "./modules/module.ts";
import { createStatusModule } from "./modules/status/index.ts";
import {
  createConnectivityModule,
  createPartnerRoomTypeCodes,
  createPartnerSwitchInterceptor,
  type AriPushOptions,
} from "./modules/connectivity/index.ts";
import {
  createAuthInterceptorOf,
  createAuthModule,
  createAuthServices,
  checkPropertyBindings,
  type AuthServices,
} from "./modules/auth/index.ts";
import { createAdminModule, createAdminService, type AdminService } from "./modules/admin/index.ts";
import {
  createPlatformInterceptors,
  createPlatformModule,
  createPlatformSettings,
  getPlatformSettings,
  rateLimitsOf,
} from "./modules/platform/index.ts";
import { createWebhooksModule, type WebhookOptions } from "./modules/webhooks/index.ts";
import { createCashieringModule } from "./modules/cashiering/index.ts";
import { createFolioService, createFolioWindows, type FolioService, type FolioWindows } from "./modules/folio/index.ts";
import { createCityLedger, type CityLedger } from "./modules/city-ledger/index.ts";
import {
  createHttpIntegrator,
  createInvoiceService,
  createInvoicesModule,
  type InvoiceService,
} from "./modules/invoices/index.ts";
import { createNightAuditService, type NightAuditService } from "./modules/night-audit/index.ts";
import { createInventoryModule, createInventoryService, type InventoryService } from "./modules/inventory/index.ts";
import {
  createReservationService,
  createReservationsModule,
  stayInRoom,
  type ReservationService,
} from "./modules/reservations/index.ts";
import { createIdentityModule } from "./modules/identity/index.ts";
import { createMobileModule } from "./modules/mobile/index.ts";
import { createNotificationsModule } from "./modules/notifications/index.ts";
import { createEventsModule } from "./modules/events/index.ts";
import { createAuditModule } from "./modules/audit/index.ts";
import {
  createGuests,
  createGuestsModule,
  guestReportingCounts,
  lineGuestsReader,
  type GuestService,
} from "./modules/guests/index.ts";
import { createMetrics, type Metrics } from "./observability/metrics.ts";
import { startMetricsServer } from "./observability/metrics-server.ts";
import { startTracing, type Tracing } from "./observability/tracing.ts";

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** Test seams of the webhook engine (DNS resolver, request timeout, jitter, mailer). */
  webhooks?: WebhookOptions;
  /** The ARI push's window, tick and message size (tests and the bench; production uses the defaults). */
  ariPush?: AriPushOptions;
}

export interface App {
  config: Config;
  deps: Deps;
  services: Services;
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

/** Every domain service of the app, each built once here; tests and benches take them from `app.services`. */
export interface Services {
  auth: AuthServices;
  admin: AdminService;
  inventory: InventoryService;
  reservations: ReservationService;
  folios: FolioService;
  folioWindows: FolioWindows;
  cityLedger: CityLedger;
  invoices: InvoiceService;
  nightAudit: NightAuditService;
  guests: GuestService;
}

export function createServices(deps: Deps): Services {
  const { transact, clock } = deps;
  const folios = createFolioService({ transact, clock });
  const cityLedger = createCityLedger({ transact, clock, folios });
  const guests = createGuests(deps);
  // policy fees (cancellation, no-show, late check-out) go to the folio in the reservation change's transaction
  const reservations = createReservationService({
    transact,
    pool: deps.db.pool,
    clock,
    postFee: async (tx, propertyId, fee) => {
      await folios.postFee(tx, propertyId, fee);
    },
    // each check-in and check-out reports the line's occupants to the authority (KBS), in its transaction
    onStayMovement: guests.reporting.reportMovementInTx,
    // a check-out may settle the reservation's folios to a city-ledger account, in its transaction
    settleAtCheckOut: cityLedger,
  });
  return {
    auth: createAuthServices(deps, {
      partnerApiEnabled: async () => (await getPlatformSettings(deps.db)).partnerApiEnabled,
    }),
    admin: createAdminService(deps),
    inventory: createInventoryService({
      transact,
      pool: deps.db.pool,
      clock,
      stayInRoom,
      replicaReads: deps.db.replicaReads,
    }),
    reservations,
    folios,
    folioWindows: createFolioWindows({ transact, clock, folios }),
    cityLedger,
    // the e-Fatura registry is asked through the configured integrator (none: a lookup is 503)
    invoices: createInvoiceService({
      transact,
      clock,
      ...(deps.config.edocumentIntegrator !== undefined
        ? { registry: createHttpIntegrator(deps.config.edocumentIntegrator) }
        : {}),
    }),
    // the night audit marks no-shows through the reservations service, inside the audit's transaction
    nightAudit: createNightAuditService({
      transact,
      clock,
      folios,
      markNoShow: reservations.markNoShowInTx,
      guestReporting: guestReportingCounts(guests),
      logger: deps.logger,
    }),
    guests,
  };
}

/** The modules of the service: RPC faces and workers. Their order does not matter (the chain is below). */
function createModules(deps: Deps, s: Services, options: AppOptions = {}): Module[] {
  const identity = createIdentityModule(deps, s.guests);
  const audit = createAuditModule(deps);
  // a booking sent to a partner's callback names its room types in the partner's codes (connectivity's mappings)
  const webhooks = createWebhooksModule(deps, createPartnerRoomTypeCodes(deps.db.pool), options.webhooks);
  return [
    createStatusModule(deps),
    // partners' callbacks are webhook addresses: the connectivity face reads their history and ARI listeners
    createConnectivityModule(deps, s.reservations, s.inventory, webhooks.callbacks, options.ariPush),
    createAuthModule(deps, s.auth),
    createAdminModule(s.admin),
    createPlatformModule(deps),
    webhooks,
    // staff alerts by e-mail (the panel notifications are written with the change)
    createNotificationsModule(deps),
    createEventsModule(deps),
    createInventoryModule(deps, s.inventory),
    // reservation reads carry the guests linked to their room lines
    createReservationsModule(deps, s.reservations, lineGuestsReader(s.guests)),
    createCashieringModule(deps, {
      folios: s.folios,
      windows: s.folioWindows,
      ledger: s.cityLedger,
      invoices: s.invoices,
      nightAudit: s.nightAudit,
    }),
    // e-documents to the integrator (a worker only where EDOCUMENT_INTEGRATOR_URL is set)
    createInvoicesModule(deps),
    // mobile identity-document scan (OCR worker thread, started on first use)
    identity,
    // guest profiles (personal data sealed at rest)
    createGuestsModule(deps, s.guests),
    // the audit trail's read face and partition job (its ListAuditChanges part is spread into MobileService)
    audit,
    // MobileService (one registration: the identity scan and audit parts spread in)
    createMobileModule(deps, {
      inventory: s.inventory,
      reservations: s.reservations,
      nightAudit: s.nightAudit,
      parts: { ...identity.mobileRpc, ...audit.mobileRpc },
      lineGuests: lineGuestsReader(s.guests),
      guestReporting: guestReportingCounts(s.guests),
    }),
  ];
}

/**
 * The interceptor chain of every call on every face, outermost first. The one place its order is written:
 * 1. request id, logging and the one error mapping (sees every outcome, the ones below included);
 * 2. the platform-wide partner API switch: answers 503 before any authentication work;
 * 3. authentication and authorization: resolves the principal the next ones read;
 * 4. rate limits, then idempotency (they share one statement on a keyed write: count and claim together).
 */
function createInterceptors(deps: Deps, s: Services, tracing: Tracing | undefined): Interceptor[] {
  return [
    createCallInterceptor(deps.logger, { metrics: deps.metrics, tracing }),
    createPartnerSwitchInterceptor(createPlatformSettings(deps.db)),
    createAuthInterceptorOf(deps, s.auth),
    ...createPlatformInterceptors({
      pool: deps.db.pool,
      clock: deps.clock,
      logger: deps.logger,
      limits: rateLimitsOf(deps.config),
      idempotency: { commitDelayMs: deps.config.testCommitDelayMs },
    }),
  ];
}

/** The composition root: builds every object by hand, in dependency order, and nothing else. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const tracing = await startTracing(config.otlpEndpoint, config.serviceName, config.tracesSampler);
  const db = await openDatabase(config, logger, { traced: tracing !== undefined });
  const metrics = config.metrics.enabled ? createMetrics(db.pool) : undefined;
  metrics?.instrumentPool("main", db.pool);
  const telemetry = {
    tracer: tracing?.tracer,
    ...(metrics ? { onFailure: metrics.jobFailed, onRun: metrics.jobStarted } : {}),
  };
  const boss = await startBoss({
    pool: db.pool,
    url: db.sessionUrl,
    role: config.role,
    logger,
    graceMs: config.shutdownGraceMs,
    telemetry,
  });
  const deps: Deps = { config, db, boss, transact: createTransact(db.pool, boss.pgboss), clock, logger, metrics };
  const services = createServices(deps);
  const modules = createModules(deps, services, options);
  // Property isolation is declared per RPC in its descriptor: one that names a property's resource but no
  // property it is bound to stops the start here, before anything listens.
  checkPropertyBindings(modules.flatMap((m) => m.services ?? []));
  for (const m of modules) await m.startWorkers?.();

  let listener: Listener | undefined;
  let gateway: Gateway | undefined;
  if (config.role !== "worker") {
    ({ listener, gateway } = await startApiServer({
      config,
      db,
      logger,
      metrics,
      modules,
      interceptors: createInterceptors(deps, services, tracing),
    }));
  }
  const metricsServer =
    metrics !== undefined && config.metrics.port !== undefined
      ? await startMetricsServer(metrics, { port: config.metrics.port, host: config.host, token: config.metrics.token })
      : undefined;

  return {
    config,
    deps,
    services,
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
      // Requests and then jobs drain within one SHUTDOWN_GRACE_MS in all (main.ts exits when it is over).
      const deadline = Date.now() + config.shutdownGraceMs;
      for (const m of modules) m.closeStreams?.();
      await listener?.close(config.shutdownGraceMs);
      await metricsServer?.close();
      // Jobs drain first: a module's resources (the webhook sender's connections) may be in use by a running job.
      await boss.stop(Math.max(0, deadline - Date.now()));
      for (const m of modules) await m.stop?.();
      await db.close();
      await tracing?.shutdown();
    },
  };
}
