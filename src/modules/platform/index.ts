import type { Deps, Module } from "../module.ts";
import { createIdempotencyInterceptor } from "./idempotency.interceptor.ts";
import { createIdempotencyRepository } from "./idempotency.repository.ts";
import { createRateLimitInterceptor } from "./rate-limit.interceptor.ts";
import { createRateLimitRepository } from "./rate-limit.repository.ts";
import { startPlatformJobs } from "./platform.jobs.ts";

export { createIdempotencyInterceptor, type IdempotencyOptions } from "./idempotency.interceptor.ts";
export { createIdempotencyRepository, type IdempotencyRepository } from "./idempotency.repository.ts";
export { createRateLimitInterceptor, type RateLimitOptions, type RateLimits } from "./rate-limit.interceptor.ts";
export { createRateLimitRepository, type RateLimitRepository } from "./rate-limit.repository.ts";
export { purgePlatform } from "./platform.jobs.ts";
export { policyOf, type MethodPolicy, type RateLimitClass } from "./policy.rpc.ts";

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
  };
  return {
    name: "platform",
    interceptors: [
      createRateLimitInterceptor({ repository: rateLimits, clock: deps.clock, limits, logger: deps.logger }),
      createIdempotencyInterceptor({ repository: idempotency, clock: deps.clock, logger: deps.logger }),
    ],
    startWorkers: () => startPlatformJobs(deps.boss, { idempotency, rateLimits, clock: deps.clock, logger: deps.logger }),
  };
}
