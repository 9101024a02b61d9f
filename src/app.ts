import { createConnectRouter } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import type { Config } from "./config.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { openDatabase, type Database } from "./db/index.ts";
import { startBoss, type Boss } from "./jobs/boss.ts";
import { createGateway } from "./gateway/index.ts";
import { createDispatcher } from "./server/dispatch.ts";
import { createCallInterceptor } from "./server/interceptors.ts";
import { listen, type Listener } from "./server/listen.ts";
import { registerHealth } from "./server/health.ts";
import { registerReflection } from "./server/reflection.ts";
import { createPlatformSettings } from "./db/platform-settings.ts";
import { createStatusService, registerStatusRpc, statusRpcServices } from "./modules/status/index.ts";

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
}

export interface App {
  config: Config;
  db: Database;
  boss: Boss;
  /** The port the API listens on (undefined for ROLE=worker). */
  port: number | undefined;
  clock: Clock;
  logger: Logger;
  close(): Promise<void>;
}

/** The composition root: builds every object by hand, in dependency order, and nothing else. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const db = await openDatabase(config, logger);
  const boss = await startBoss({ url: db.url, role: config.role, logger });

  const status = createStatusService(createPlatformSettings(db));

  let listener: Listener | undefined;
  if (config.role !== "worker") {
    const router = createConnectRouter({ interceptors: [createCallInterceptor(logger)], readMaxBytes: config.maxBodyBytes });
    registerStatusRpc(router, status);
    const served: DescService[] = [...statusRpcServices];
    registerReflection(router, served);
    registerHealth(router, served, db.readiness);
    const gateway = createGateway({ handlers: router.handlers, maxBodyBytes: config.maxBodyBytes });
    const dispatcher = createDispatcher({ handlers: router.handlers, gateway, ready: db.readiness, logger });
    listener = await listen(dispatcher, { port: config.port, host: config.host, tls: config.tls });
  }

  return {
    config,
    db,
    boss,
    port: listener?.port,
    clock,
    logger,
    async close() {
      await listener?.close(config.shutdownGraceMs);
      await boss.stop();
      await db.close();
    },
  };
}
