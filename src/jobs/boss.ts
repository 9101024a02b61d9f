import type pg from "pg";
import { PgBoss, type Job, type Queue, type SendOptions, type WorkOptions } from "pg-boss";
import type { Role } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { queues } from "./queues.ts";

/**
 * Options of one worker. The pg-boss flags that change the handler's shape (transactional, perJobResults,
 * includeMetadata) are left out so every handler has the same signature; `queue` sets the queue's policy,
 * retries and expiry when this call creates it.
 */
export type WorkerOptions = Omit<WorkOptions, "transactional" | "transactionTimeoutSeconds" | "perJobResults" | "includeMetadata"> & {
  queue?: Omit<Queue, "name">;
};

/** Handles one job. Throwing fails the job (retried per the queue's retryLimit); `job.signal` aborts at shutdown. */
export type JobHandler<T> = (job: Job<T>) => Promise<unknown>;

export interface Boss {
  pgboss: PgBoss;
  /** Creates the queue (notify on) and, when this process runs jobs (ROLE=worker|all), starts a worker. */
  registerWorker<T extends object>(queue: string, handler: JobHandler<T>, options?: WorkerOptions): Promise<void>;
  /** Stops fetching, waits up to graceMs for running handlers, fails what is still running, closes the pool. */
  stop(): Promise<void>;
}

export interface BossOptions {
  url: string;
  role: Role;
  logger: Logger;
  /** How long stop() waits for in-flight jobs. Default 10 s (pg-boss enforces at least 1 s). */
  graceMs?: number;
}

/**
 * pg-boss on the service database in its own schema `pgboss` (created or upgraded on start, under pg-boss's
 * own advisory lock). LISTEN/NOTIFY is on and queues are created with `notify: true`, so a job sent in a
 * committed transaction starts within milliseconds instead of at the next poll.
 */
export async function startBoss(opts: BossOptions): Promise<Boss> {
  const runsJobs = opts.role !== "api";
  const pgboss = new PgBoss({
    connectionString: opts.url,
    schema: "pgboss",
    useListenNotify: true,
    // Small: workers hold a connection only while fetching or completing; one more is the LISTEN session.
    max: 4,
    // Cron and maintenance belong to processes that run jobs; API-only processes only send.
    schedule: runsJobs,
    supervise: runsJobs,
  });
  pgboss.on("error", (err) => opts.logger.error({ err }, "pg-boss error"));
  pgboss.on("warning", (warning) => opts.logger.warn({ warning }, "pg-boss warning"));
  await pgboss.start();
  const ensureQueue = async (name: string, options: Omit<Queue, "name"> = {}): Promise<void> => {
    // A no-op when the queue exists (options of an existing queue are not changed here).
    await pgboss.createQueue(name, { notify: true, ...options });
  };
  for (const name of Object.values(queues)) await ensureQueue(name);
  return {
    pgboss,
    async registerWorker<T extends object>(queue: string, handler: JobHandler<T>, options: WorkerOptions = {}) {
      const { queue: queueOptions, ...work } = options;
      await ensureQueue(queue, queueOptions);
      if (!runsJobs) return;
      // batchSize 1 by default, so a failing job fails alone; with a larger batch one throw fails the batch.
      await pgboss.work<T>(queue, { batchSize: 1, ...work }, async (jobs) => {
        for (const job of jobs) await handler(job);
      });
    },
    async stop() {
      await pgboss.stop({ graceful: true, timeout: opts.graceMs ?? 10_000 });
    },
  };
}

/** One SQL statement with `$1..$n` placeholders. */
export interface Statement {
  text: string;
  values: readonly unknown[];
}

const composedNames = new Map<string, string>();

/**
 * One data-modifying statement and one job in a single SQL statement: `statement` runs as a CTE in front of
 * pg-boss's own job insert (the SQL that send() would run, taken with a capturing db adapter), so the row and
 * the job commit together or not at all, in one round trip and without a transaction. For a hot path that
 * writes one row; anything more goes through transact() and tx.enqueue(). Returns the job id.
 */
export async function insertWithJob(pool: pg.Pool, pgboss: PgBoss, statement: Statement, queue: string, data: object, options: Omit<SendOptions, "db"> = {}): Promise<string | null> {
  let job: Statement | undefined;
  const capture = {
    executeSql: async (text: string, values: unknown[] = []) => {
      job = { text, values };
      return { rows: [{ id: "" }] };
    },
  };
  await pgboss.send(queue, data, { ...options, db: capture });
  if (job === undefined) throw new Error(`pg-boss sent no insert for queue ${queue}`);
  const jobValues = job.values;
  const text = composedText(statement, job.text);
  let name = composedNames.get(text);
  if (name === undefined) {
    // Named, so each pooled connection parses and plans the composed statement once.
    name = `with_job_${composedNames.size}`;
    composedNames.set(text, name);
  }
  const { rows } = await pool.query<{ id: string }>({ name, text, values: [...statement.values, ...jobValues] });
  return rows[0]?.id ?? null;
}

/** `WITH written AS (statement)` joined to pg-boss's insert, whose placeholders move up past the statement's. */
function composedText(statement: Statement, jobText: string): string {
  const shifted = jobText.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + statement.values.length}`);
  const leadingWith = /^\s*with\s/i.exec(shifted);
  return leadingWith === null ? `WITH written AS (${statement.text}) ${shifted}` : `WITH written AS (${statement.text}), ${shifted.slice(leadingWith[0].length)}`;
}
