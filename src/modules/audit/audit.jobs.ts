import type { Boss } from "../../jobs/boss.ts";
import { queues } from "../../jobs/queues.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { maintainAuditPartitions } from "./partitions.ts";

/** Daily (and once at start): the months ahead exist, the months past retention are dropped. */
export async function startAuditJobs(boss: Boss, deps: { transact: Transact; clock: Clock; logger: Logger }) {
  await boss.registerWorker(queues.auditPartitions, async () => {
    const run = await maintainAuditPartitions(deps.transact, deps.clock.now());
    if (run.created.length + run.dropped.length > 0) deps.logger.info(run, "audit partitions");
    return run;
  });
  await boss.pgboss.schedule(queues.auditPartitions, "17 2 * * *");
  await boss.pgboss.send(queues.auditPartitions, {});
}
