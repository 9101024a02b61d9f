import { PgBoss, type Job, type Queue, type WorkOptions } from "pg-boss";
import type { Role } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { queues } from "./queues.ts";

export interface Boss {
  pgboss: PgBoss;
  /** Registers a worker when this process runs jobs (ROLE=worker|all); a no-op for ROLE=api. */
  registerWorker<T extends object>(queue: string, handler: (job: Job<T>) => Promise<unknown>, options?: WorkOptions & { queue?: Omit<Queue, "name"> }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * pg-boss on the service database in its own schema. LISTEN/NOTIFY is on and queues are created with
 * `notify: true`, so a job sent in a committed transaction starts within milliseconds, not at the next poll.
 */
export async function startBoss(opts: { url: string; role: Role; logger: Logger; graceMs?: number }): Promise<Boss> {
  const pgboss = new PgBoss({ connectionString: opts.url, schema: "pgboss", useListenNotify: true, max: 4 });
  pgboss.on("error", (err) => opts.logger.error({ err }, "pg-boss error"));
  await pgboss.start();
  const runsJobs = opts.role !== "api";
  const ensureQueue = async (name: string, options: Omit<Queue, "name"> = {}): Promise<void> => {
    await pgboss.createQueue(name, { notify: true, ...options });
  };
  for (const name of Object.values(queues)) await ensureQueue(name);
  return {
    pgboss,
    async registerWorker(queue, handler, options = {}) {
      const { queue: queueOptions, ...work } = options;
      await ensureQueue(queue, queueOptions);
      if (!runsJobs) return;
      await pgboss.work(queue, { batchSize: 1, ...work }, async (jobs: Job<never>[]) => {
        for (const job of jobs) await handler(job as Job<never>);
      });
    },
    async stop() {
      await pgboss.stop({ graceful: true, timeout: opts.graceMs ?? 10_000 });
    },
  };
}
