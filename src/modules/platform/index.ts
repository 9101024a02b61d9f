import type { Deps, Module } from "../module.ts";
import type { Interceptor } from "@connectrpc/connect";
import type pg from "pg";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { createIdempotency, type IdempotencyOptions } from "./idempotency.interceptor.ts";
import { createIdempotencyRepository } from "./idempotency.repository.ts";
import { createRateLimitInterceptor, type RateLimits } from "./rate-limit.interceptor.ts";
import { createRateLimitRepository } from "./rate-limit.repository.ts";
import { startPlatformJobs } from "./platform.jobs.ts";

export { type IdempotencyOptions } from "./idempotency.interceptor.ts";
export { createIdempotencyRepository } from "./idempotency.repository.ts";
export { createRateLimitInterceptor, type RateLimits } from "./rate-limit.interceptor.ts";
export { createRateLimitRepository } from "./rate-limit.repository.ts";
export { purgePlatform } from "./platform.jobs.ts";
export { createPlatformSettings, getPlatformSettings, partnerApiOnSql, setPartnerApi } from "./settings.ts";
/**
 * The rate-limit and idempotency interceptors, in that order. On a keyed write the idempotency module's claim
 * statement also counts the call for the limiter (countWith): one round trip, the claim only within the limit.
 */
export function createPlatformInterceptors(opts: {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  limits: RateLimits;
  idempotency?: Partial<Omit<IdempotencyOptions, "repository" | "clock" | "logger">>;
}): Interceptor[] {
  const idempotency = createIdempotency({
    ...opts.idempotency,
    repository: createIdempotencyRepository(opts.pool),
    clock: opts.clock,
    logger: opts.logger,
  });
  return [
    createRateLimitInterceptor({
      repository: createRateLimitRepository(opts.pool),
      pool: opts.pool,
      clock: opts.clock,
      limits: opts.limits,
      logger: opts.logger,
      countWith: idempotency.countWith,
    }),
    idempotency.interceptor,
  ];
}

/** The platform's jobs: the purge of expired idempotency keys and rate-limit windows. */
export function createPlatformModule(deps: Deps): Module {
  const idempotency = createIdempotencyRepository(deps.db.pool);
  const rateLimits = createRateLimitRepository(deps.db.pool);
  return {
    name: "platform",
    startWorkers: () =>
      startPlatformJobs(deps.boss, { idempotency, rateLimits, clock: deps.clock, logger: deps.logger }),
  };
}

/** The call limits of the configuration (per minute). */
export function rateLimitsOf(config: Deps["config"]): RateLimits {
  return {
    staffPerMinute: config.rateLimitStaffPerMinute,
    anonPerMinute: config.rateLimitAnonPerMinute,
    authPerMinute: config.rateLimitAuthPerMinute,
    token: {
      perClientPerMinute: config.rateLimitTokenPerMinute,
      failuresPerMinute: config.rateLimitTokenFailuresPerMinute,
    },
  };
}
