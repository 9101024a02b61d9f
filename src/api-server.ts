import type { Interceptor } from "@connectrpc/connect";
import type { Config } from "./config.ts";
import type { Database } from "./db/index.ts";
import { createGateway, type Gateway } from "./gateway/index.ts";
import { createXmlEndpoints } from "./gateway/xml.ts";
import type { Logger } from "./lib/logger.ts";
import { MAX_IMAGE_BYTES } from "./modules/identity/index.ts";
import type { Module } from "./modules/module.ts";
import type { Metrics } from "./observability/metrics.ts";
import { createRecordingRouter } from "./server/calls.ts";
import { createClientAddress, parseTrustedProxies } from "./server/client-address.ts";
import { COMPRESS_MIN_BYTES, connectCompressions } from "./server/compression.ts";
import { createCors } from "./server/cors.ts";
import { createDispatcher } from "./server/dispatch.ts";
import { registerHealth } from "./server/health.ts";
import { listen, type Listener } from "./server/listen.ts";
import { registerReflection } from "./server/reflection.ts";
import { createUnaryFastPath } from "./server/unary.ts";

/**
 * The API port of an api or all process (app.ts calls it): the modules' RPCs on one router behind the interceptor
 * chain, reflection and health, the REST gateway and XML endpoints over the same calls, and the one listener.
 */
export async function startApiServer(o: {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: Metrics | undefined;
  modules: readonly Module[];
  interceptors: Interceptor[];
}): Promise<{ listener: Listener; gateway: Gateway }> {
  const { config, db, logger, metrics, modules, interceptors } = o;
  const router = createRecordingRouter({
    interceptors,
    readMaxBytes: config.maxBodyBytes,
    acceptCompression: connectCompressions,
    compressMinBytes: COMPRESS_MIN_BYTES,
  });
  for (const m of modules) m.registerRpc?.(router);
  const served = modules.flatMap((m) => m.services ?? []);
  registerReflection(router, served);
  registerHealth(router, served, db.readiness);
  const gateway = createGateway({
    ...router.direct,
    maxBodyBytes: config.maxBodyBytes,
    maxFileBytes: MAX_IMAGE_BYTES,
    refuseAnonymousBeforeBody: true,
  });
  const clientAddress = createClientAddress(parseTrustedProxies(config.trustedProxies) ?? []);
  // In production /metrics stays off the public port unless a token guards it: METRICS_PORT (loopback or a
  // private network) or METRICS_TOKEN (docs/operations/metrics.md).
  const publicMetrics = config.nodeEnv !== "production" || config.metrics.token !== undefined;
  const onMainPort =
    metrics !== undefined && config.metrics.port === undefined && publicMetrics
      ? { render: metrics.render, contentType: metrics.contentType, token: config.metrics.token }
      : undefined;
  if (metrics !== undefined && config.metrics.port === undefined && !publicMetrics)
    logger.warn("/metrics is not served: in production set METRICS_PORT (a port of its own) or METRICS_TOKEN");
  const dispatcher = createDispatcher({
    handlers: router.handlers,
    gateway,
    ready: db.readiness,
    logger,
    clientAddress,
    cors: createCors(config.corsOrigins),
    metrics: onMainPort,
    unary: config.unaryFastPath ? createUnaryFastPath(router.direct) : undefined,
    xml: createXmlEndpoints({ ...router.direct, endpoints: modules.flatMap((m) => m.xmlEndpoints ?? []) }),
  });
  const listener = await listen(dispatcher, {
    port: config.port,
    host: config.host,
    tls: config.tls,
    limits: config.connections,
  });
  return { listener, gateway };
}
