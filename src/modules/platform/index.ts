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

export { createIdempotency, type Idempotency, type IdempotencyOptions } from "./idempotency.interceptor.ts";
export { createIdempotencyRepository, type IdempotencyRepository } from "./idempotency.repository.ts";
export { createRateLimitInterceptor, type RateLimitOptions, type RateLimits } from "./rate-limit.interceptor.ts";
export { createRateLimitRepository, type RateLimitRepository } from "./rate-limit.repository.ts";
export { purgePlatform } from "./platform.jobs.ts";
export { policyOf, type MethodPolicy, type RateLimitClass } from "./policy.rpc.ts";

/**
 * The rate-limit and idempotency interceptors, in that order, sharing one statement on a keyed write: the count
 * and the key's claim go to PostgreSQL together (the claim only when the call is within its limit).
 */
export function createPlatformInterceptors(opts: {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  limits: RateLimits;
  idempotency?: Partial<Omit<IdempotencyOptions, "repository" | "clock" | "logger">>;
}): Interceptor[] {
  const idempotency = createIdempotency({ ...opts.idempotency, repository: createIdempotencyRepository(opts.pool), clock: opts.clock, logger: opts.logger });
  return [
    createRateLimitInterceptor({ repository: createRateLimitRepository(opts.pool), pool: opts.pool, clock: opts.clock, limits: opts.limits, logger: opts.logger, claimFor: idempotency.claimFor }),
    idempotency.interceptor,
  ];
}

/**
 * Cross-cutting call policy for every face (gRPC, Connect, REST): rate limits, then idempotency. Composed after
 * the auth module so both see the principal; without one every caller is anonymous.
 */
export function createPlatformModule(deps: Deps): Module {
  const idempotency = createIdempotencyRepository(deps.db.pool);
  const rateLimits = createRateLimitRepository(deps.db.pool);
  const limits = {
    staffPerMinute: deps.config.rateLimitStaffPerMinute,
    anonPerMinute: deps.config.rateLimitAnonPerMinute,
    authPerMinute: deps.config.rateLimitAuthPerMinute,
    token: { perClientPerMinute: deps.config.rateLimitTokenPerMinute, failuresPerMinute: deps.config.rateLimitTokenFailuresPerMinute },
  };
  return {
    name: "platform",
    interceptors: createPlatformInterceptors({ pool: deps.db.pool, clock: deps.clock, logger: deps.logger, limits, idempotency: { commitDelayMs: deps.config.testCommitDelayMs } }),
    startWorkers: () => startPlatformJobs(deps.boss, { idempotency, rateLimits, clock: deps.clock, logger: deps.logger }),
  };
}
