import { loadConfig, type Config } from "../../src/config.ts";
import { createApp, type App } from "../../src/app.ts";
import type { Clock } from "../../src/lib/clock.ts";
import { freshDatabaseUrl } from "./db.ts";
import { testLogger } from "./logs.ts";

export interface TestApp extends App {
  baseUrl: string;
  port: number;
}

/**
 * Tests send many anonymous and login calls from 127.0.0.1 within one minute; the production limits (docs/conventions.md,
 * "Rate limits") would throttle them. Rate-limit tests pass their own values through `env`.
 */
const generousRateLimits = {
  RATE_LIMIT_ANON_PER_MINUTE: "100000",
  RATE_LIMIT_STAFF_PER_MINUTE: "100000",
  RATE_LIMIT_AUTH_PER_MINUTE: "100000",
  RATE_LIMIT_TOKEN_PER_MINUTE: "100000",
  RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: "100000",
};

/** The whole service on a fresh database and a free port, as a test file sees it over real sockets. */
export async function startTestApp(
  options: { env?: Record<string, string>; clock?: Clock; databaseUrl?: string } = {},
): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? (await freshDatabaseUrl());
  const config: Config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_URL: databaseUrl,
    SHUTDOWN_GRACE_MS: "2000",
    ...generousRateLimits,
    // the suite runs once more with UNARY_FAST_PATH=off (.ci/run): connect-es's own handlers serve the same tests
    ...(process.env.UNARY_FAST_PATH === undefined ? {} : { UNARY_FAST_PATH: process.env.UNARY_FAST_PATH }),
    ...options.env,
  });
  const app = await createApp(config, { logger: testLogger(), ...(options.clock ? { clock: options.clock } : {}) });
  if (app.port === undefined) throw new Error("test app has no port (ROLE=worker?)");
  return Object.assign(app, { baseUrl: `http://127.0.0.1:${app.port}`, port: app.port });
}
