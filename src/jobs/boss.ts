import type pg from "pg";
import { runAs } from "../lib/change-context.ts";
import { PgBoss, type Db, type Job, type JobInsert, type Queue, type WorkOptions } from "pg-boss";
import type { Role } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { queues } from "./queues.ts";
import type { Keyed, OutcomeRecord } from "../db/held-transaction.ts";
import { throwIfDeadlinePassed } from "../lib/deadline.ts";
import { runBossSql, runQuery, type Statement } from "../db/queryable.ts";
import type { Transact, Tx } from "../db/transaction.ts";
import { pooledTransaction } from "../db/pooled-transaction.ts";
import { instrumentBoss, withTrace, type JobTelemetry } from "./telemetry.ts";
import { createListen } from "./listen-session.ts";

/**
 * Options of one worker. The pg-boss flags that change the handler's shape (transactional, perJobResults,
 * includeMetadata) are left out so every handler has the same signature; `queue` sets the queue's policy,
 * retries and expiry when this call creates it.
 */
type WorkerOptions = Omit<
  WorkOptions,
  "transactional" | "transactionTimeoutSeconds" | "perJobResults" | "includeMetadata"
> & {
  queue?: Omit<Queue, "name">;
};

/**
 * How long a job may run at most before pg-boss fails it and retries it (every queue's default; a queue whose work
 * can take longer says so in its own options).
 */
const JOB_EXPIRY_SECONDS = 45;
/**
 * A worker refreshes the jobs it holds every half of this; a job whose refresh is this late has lost its worker
 * (kill -9, lost host, a database outage that made its own failure unrecordable) and is failed by the supervisor,
 * then retried after its retry delay (pg-boss's minimum is 10 s).
 */
const JOB_HEARTBEAT_SECONDS = 10;
/**
 * How often processes that run jobs supervise every queue: fail jobs whose heartbeat is late or whose expiry has
 * passed. pg-boss gates the per-queue pass by `monitorIntervalSeconds` (default 60 s, which made a lost job wait up to
 * a minute for its takeover): both are set to this.
 */
const SUPERVISE_SECONDS = 5;
/**
 * How often a worker looks for jobs without being told (NOTIFY comes for new jobs only): a retry whose delay has
 * passed runs within this, not within pg-boss's 30 s default. Queues with a latency bound poll faster
 * (LATENCY_POLL_SECONDS).
 */
const RETRY_POLL_SECONDS = 5;
/** The poll of the queues with a latency bound (partner messages, event fan-out, webhook attempts). */
export const LATENCY_POLL_SECONDS = 2;
/**
 * Retry policy of the queues with a latency bound: the first retry after 1-2 s, backing off to at most 10 s between
 * attempts (so an attempt made during a database outage is tried again within 10 s of its end, never after a
 * minute-long backoff), 30 attempts (about 5 minutes of retries, as long as the 5 retries from 5 s before).
 * The bounds these give are stated per queue in src/jobs/queues.ts (`takeoverBounds`).
 */
export const LATENCY_RETRY = {
  retryLimit: 30,
  retryDelay: 1,
  retryBackoff: true,
  retryDelayMax: 10,
  expireInSeconds: JOB_EXPIRY_SECONDS,
} as const;

/** Handles one job. Throwing fails the job (retried per the queue's retryLimit); `job.signal` aborts at shutdown. */
type JobHandler<T> = (job: Job<T>) => Promise<unknown>;

export interface Boss {
  pgboss: PgBoss;
  /** Creates the queue (notify on) and, when this process runs jobs (ROLE=worker|all), starts a worker. */
  registerWorker<T extends object>(queue: string, handler: JobHandler<T>, options?: WorkerOptions): Promise<void>;
  /**
   * Like registerWorker, for handlers that take a batch of jobs at once (one claim statement per batch). The
   * queue's policy (`options.queue`) is applied whether or not the queue existed. A throw fails the batch.
   */
  registerBatchWorker<T extends object>(
    queue: string,
    handler: (jobs: Job<T>[]) => Promise<unknown>,
    options: WorkerOptions & { batchSize: number },
  ): Promise<void>;
  /**
   * Stops fetching, waits up to `graceMs` (default: the boss's graceMs) for running handlers, fails what is still
   * running (pg-boss retries it), ends the LISTEN session. A handler that ignores its abort signal keeps running:
   * main.ts bounds the whole shutdown.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface BossOptions {
  /** The process's one pool: every pg-boss statement runs on it. */
  pool: pg.Pool;
  /** Where the one extra connection, the LISTEN session, connects. */
  url: string;
  role: Role;
  logger: Logger;
  /** How long stop() waits for in-flight jobs. Default 10 s (pg-boss enforces at least 1 s). */
  graceMs?: number;
  /** Trace context carried in jobs and failure counts (see telemetry.ts). */
  telemetry?: JobTelemetry;
}

/**
 * pg-boss on the service database in its own schema `pgboss` (created or upgraded on start, under pg-boss's
 * own advisory lock). LISTEN/NOTIFY is on and queues are created with `notify: true`, so a job sent in a
 * committed transaction starts within milliseconds instead of at the next poll.
 * Connections: pg-boss has no pool of its own; its statements run on the process's pool (a `db` adapter),
 * and LISTEN holds one dedicated session (it cannot be pooled: a pooled connection would lose the subscription).
 */
export async function startBoss(opts: BossOptions): Promise<Boss> {
  const runsJobs = opts.role !== "api";
  const db: Db = {
    executeSql: (text, values) => runBossSql(opts.pool, text, values),
    listen: createListen(opts.url, opts.logger),
  };
  const pgboss = new PgBoss({
    db,
    schema: "pgboss",
    useListenNotify: true,
    // Cron and maintenance belong to processes that run jobs; API-only processes only send.
    schedule: runsJobs,
    supervise: runsJobs,
    // Jobs whose worker died (heartbeat lost) or that ran past their expiry are failed and retried this often; the
    // per-queue pass that does it is gated by the monitor interval (default 60 s), so both are set.
    superviseIntervalSeconds: SUPERVISE_SECONDS,
    monitorIntervalSeconds: SUPERVISE_SECONDS,
  });
  instrumentBoss(pgboss, opts.telemetry ?? {});
  pgboss.on("error", (err) => opts.logger.error({ err }, "pg-boss error"));
  pgboss.on("warning", (warning) => opts.logger.warn({ warning }, "pg-boss warning"));
  await pgboss.start();
  const ensureQueue = async (name: string, options: Omit<Queue, "name"> = {}): Promise<void> => {
    const policy = { expireInSeconds: JOB_EXPIRY_SECONDS, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, ...options };
    await pgboss.createQueue(name, { notify: true, ...policy });
    // An existing queue keeps the options it was created with (pg-boss's default expiry is 15 minutes, no
    // heartbeat): set them.
    await pgboss.updateQueue(name, policy);
  };
  for (const name of Object.values(queues)) await ensureQueue(name);
  return {
    pgboss,
    async registerWorker<T extends object>(queue: string, handler: JobHandler<T>, options: WorkerOptions = {}) {
      const { queue: queueOptions, ...work } = options;
      await ensureQueue(queue, queueOptions);
      if (!runsJobs) return;
      // batchSize 1 by default, so a failing job fails alone; with a larger batch one throw fails the batch.
      const batchSize = work.batchSize ?? 1;
      const worker: { id?: string } = {};
      worker.id = await pgboss.work<T>(
        queue,
        { notifyPollingIntervalSeconds: RETRY_POLL_SECONDS, ...work, batchSize },
        async (jobs) => {
          // The job is the author of what it changes (the audit trail), unless its handler says otherwise.
          for (const job of jobs)
            await runAs({ kind: "system", id: queue, face: "job", requestId: job.id }, () => handler(job));
          // A full fetch may have left more behind: fetch again at once instead of waiting for a NOTIFY (sent only
          // for new jobs) or the poll, so a backlog (a worker started late, a burst) drains at full speed.
          if (jobs.length >= batchSize && worker.id !== undefined) pgboss.notifyWorker(worker.id);
        },
      );
    },
    async registerBatchWorker<T extends object>(
      queue: string,
      handler: (jobs: Job<T>[]) => Promise<unknown>,
      options: WorkerOptions & { batchSize: number },
    ) {
      const { queue: queueOptions, ...work } = options;
      await ensureQueue(queue, queueOptions);
      if (!runsJobs) return;
      await pgboss.work<T>(queue, { notifyPollingIntervalSeconds: RETRY_POLL_SECONDS, ...work }, async (jobs) =>
        runAs({ kind: "system", id: queue, face: "job", requestId: jobs[0]?.id ?? "" }, () => handler(jobs)),
      );
    },
    async stop(graceMs = opts.graceMs ?? 10_000) {
      // (pg-boss closes its LISTEN session itself)
      await pgboss.stop({ graceful: true, timeout: graceMs });
    },
  };
}

/** What every job a RowWriter enqueues shares (the queue's own policy fills in the rest). */
type RowJobOptions = Pick<
  JobInsert,
  "retryLimit" | "retryDelay" | "retryBackoff" | "retryDelayMax" | "expireInSeconds"
>;

export interface RowWriterSpec {
  table: string;
  /** Column name -> PostgreSQL type, in the order of the values passed to write(). */
  columns: Readonly<Record<string, string>>;
  queue: string;
  job?: RowJobOptions;
}

export interface RowWriter {
  /**
   * Inserts one row and enqueues its job; resolves once both are committed (together, or neither). With the
   * handle of a keyed call (`keyed`), the write commits with the call's stored outcome instead (see createRowWriter).
   */
  write(row: readonly unknown[], data: object, keyed?: Keyed): Promise<void>;
}

const MAX_BATCH = 500;
let writers = 0;

/**
 * Inserts rows of one table, each with a job, for a hot path: in one transaction, one statement writes the rows
 * (unnest over per-column arrays) and pg-boss's public `insert(jobs, { db })` writes their jobs on the same
 * connection, so rows and jobs commit together (or neither). Writes that arrive while a batch is running go out
 * together in the next one: one commit and one NOTIFY for the batch (PostgreSQL serializes the commits of
 * notifying transactions, so one NOTIFY per row caps throughput at one per disk flush).
 * A write given a keyed call's handle is deferred to the call's outcome (held-transaction.ts) and joins the
 * batch with it: the batch also records the outcomes of its keyed rows (one statement), so each stored outcome
 * commits with its row. If a batch fails, its rows are retried one by one, so a bad row (or a lost idempotency
 * claim) fails only its own write.
 */
export function createRowWriter(pool: pg.Pool, pgboss: PgBoss, spec: RowWriterSpec, transact?: Transact): RowWriter {
  const types = Object.values(spec.columns);
  const insertOne = `insert into ${spec.table} (${Object.keys(spec.columns).join(", ")}) values (${types.map((type, i) => `$${i + 1}::${type}`).join(", ")})`;
  // Named, so each pooled connection parses and plans it once.
  const insertRows: Statement = {
    name: `rows_of_writer_${++writers}`,
    text: `insert into ${spec.table} (${Object.keys(spec.columns).join(", ")}) select * from unnest(${types.map((type, i) => `$${i + 1}::${type}[]`).join(", ")})`,
  };
  type Pending = {
    row: readonly unknown[];
    data: object;
    /** The outcome of the write's request, committed with it (a deferred write). */
    record?: OutcomeRecord;
    commitDelayMs?: number;
    done: (err?: unknown) => void;
  };
  let pending: Pending[] = [];
  let running = false;

  async function run(batch: Pending[]): Promise<void> {
    const values = types.map((_, i) => batch.map((b) => b.row[i]));
    const jobs = batch.map((b) => ({ ...spec.job, data: b.data }));
    const records = new Map<OutcomeRecord["recordAll"], unknown[]>();
    for (const b of batch)
      if (b.record !== undefined)
        records.set(b.record.recordAll, [...(records.get(b.record.recordAll) ?? []), b.record.item]);
    const delay = Math.max(...batch.map((b) => b.commitDelayMs ?? 0));
    await pooledTransaction(pool, async (q, client) => {
      for (const [recordAll, items] of records) await recordAll(q, items);
      // The rows and pg-boss's own insert (its public insert() on this connection) leave together: the pool
      // pipelines, so BEGIN, both statements and then COMMIT take two round trips for the whole batch.
      await Promise.all([
        runQuery(client, insertRows, values),
        pgboss.insert(spec.queue, jobs, { db: { executeSql: (text, params) => runBossSql(client, text, params) } }),
      ]);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    });
  }

  async function drain(): Promise<void> {
    running = true;
    while (pending.length > 0) {
      const batch = pending.slice(0, MAX_BATCH);
      pending = pending.slice(MAX_BATCH);
      try {
        await run(batch);
        for (const b of batch) b.done();
      } catch (err) {
        if (batch.length === 1) batch[0]!.done(err);
        else
          for (const b of batch)
            await run([b]).then(
              () => b.done(),
              (e: unknown) => b.done(e),
            );
      }
    }
    running = false;
  }

  function enqueue(write: Omit<Pending, "done">): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      pending.push({ ...write, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (!running) void drain();
    });
  }

  async function writeIn(tx: Tx, row: readonly unknown[], data: object): Promise<void> {
    await tx.query(insertOne, row);
    await tx.enqueue(spec.queue, data, spec.job ?? {});
  }

  return {
    async write(row, untraced, keyed) {
      // a call whose deadline has passed writes nothing (deadline.ts)
      throwIfDeadlinePassed();
      // the trace context of this write's request, taken here: the batch's insert runs in another request's context
      const data = withTrace(untraced);
      if (keyed !== undefined && !keyed.done) {
        // A keyed write commits with its request's stored outcome: deferred to it (and batched), or in the
        // transaction the request holds open.
        const deferred = keyed.defer({
          into: (tx) => writeIn(tx, row, data),
          commit: (record, commitDelayMs) => enqueue({ row, data, record, commitDelayMs }),
        });
        if (deferred) return;
        if (transact !== undefined) return transact((tx) => writeIn(tx, row, data), keyed);
      }
      return enqueue({ row, data });
    },
  };
}
