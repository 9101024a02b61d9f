import type { Boss } from "../../jobs/boss.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import type { IdempotencyRepository } from "./idempotency.repository.ts";
import type { RateLimitRepository } from "./rate-limit.repository.ts";

/** Windows are one minute; one more minute of slack so a clock skew between processes never drops a live window. */
const KEEP_WINDOWS_MS = 2 * 60_000;

export interface PurgeDeps {
  idempotency: IdempotencyRepository;
  rateLimits: RateLimitRepository;
  clock: Clock;
  logger: Logger;
}

/** Deletes idempotency keys past their expiry and rate-limit windows that can no longer count. */
export async function purgePlatform(deps: PurgeDeps): Promise<{ idempotencyKeys: number; rateLimitWindows: number }> {
  const now = deps.clock.now();
  const idempotencyKeys = await deps.idempotency.purgeExpired(now);
  const rateLimitWindows = await deps.rateLimits.purgeBefore(new Date(now.getTime() - KEEP_WINDOWS_MS));
  if (idempotencyKeys + rateLimitWindows > 0) deps.logger.info({ idempotencyKeys, rateLimitWindows }, "platform purge");
  return { idempotencyKeys, rateLimitWindows };
}

export async function startPlatformJobs(boss: Boss, deps: PurgeDeps): Promise<void> {
  await boss.registerWorker(queues.platformPurge, () => purgePlatform(deps));
  await boss.pgboss.schedule(queues.platformPurge, "*/5 * * * *");
}
