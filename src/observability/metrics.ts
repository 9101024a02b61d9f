import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type pg from "pg";
import { collectProcessMetrics } from "./process-metrics.ts";

/** What a pool exposes for the gauges (node-postgres's Pool has these three counters). */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** One webhook attempt as the metrics see it (an engine outcome; the error class is a fixed set). */
interface WebhookAttemptSample {
  attempt: number;
  errorClass: string | null;
  /** When the event committed: attempt 1's delay from it is the commit-to-first-attempt latency. */
  eventCreatedAt?: Date | null;
}

export interface Metrics {
  registry: Registry;
  contentType: string;
  /** One finished RPC: face (rest, connect, grpc, grpc-web), `package.Service/Method`, our error code or `ok`. */
  observeCall(face: string, rpc: string, code: string, seconds: number): void;
  /** A job handler (or batch) that threw. */
  jobFailed(queue: string): void;
  /** A job handler (or batch) starts; call what it returns as it ends (its duration; until then it counts as running). */
  jobStarted(queue: string): () => void;
  /** A partner message applied (PROCESSED) or refused (REJECTED), received at `receivedAt`. */
  partnerMessageApplied(outcome: "PROCESSED" | "REJECTED", receivedAt: Date, now: Date): void;
  observeWebhookAttempts(attempts: readonly WebhookAttemptSample[], now: Date): void;
  /** One attempt at a guest report to the authority (KBS): the sender kind and its outcome. */
  guestReportAttempt(sender: "https" | "file", outcome: "sent" | "retried" | "failed"): void;
  /** In-use, idle and waiting gauges of a connection pool, read at scrape time. */
  instrumentPool(name: string, pool: PoolCounts): void;
  render(): Promise<string>;
}

const SCRAPE_DB_TIMEOUT_MS = 2_000;
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Prometheus metrics of one process (`prom-client`, its own registry). Labels take only values from fixed sets
 * (faces, RPC names from the proto, error codes, queue names, attempt numbers capped at 8): never ids, URLs or
 * anything a caller chooses. Database-wide figures (queue depth and age, webhook addresses) are read by one
 * query each at scrape time through `pool`.
 */
export function createMetrics(pool: pg.Pool | undefined): Metrics {
  const registry = new Registry();
  // process memory, CPU, handles and event-loop delay (nodejs_eventloop_lag_*); no per-GC histogram
  collectProcessMetrics(registry);
  const calls = new Counter({
    name: "hotelops_rpc_requests_total",
    help: "RPCs answered, by face, RPC and result code",
    labelNames: ["face", "rpc", "code"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "hotelops_rpc_duration_seconds",
    help: "RPC latency, by face, RPC and result code",
    labelNames: ["face", "rpc", "code"],
    buckets: latencyBuckets,
    registers: [registry],
  });
  const jobFailures = new Counter({
    name: "hotelops_job_failures_total",
    help: "Job handlers (or batches) that threw in this process, by queue",
    labelNames: ["queue"],
    registers: [registry],
  });
  const attempts = new Counter({
    name: "hotelops_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome and attempt number",
    labelNames: ["outcome", "attempt"],
    registers: [registry],
  });
  const firstAttempt = new Histogram({
    name: "hotelops_webhook_first_attempt_delay_seconds",
    help: "From the event's commit to its first delivery attempt",
    buckets: latencyBuckets,
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: "hotelops_job_duration_seconds",
    help: "Job handler (or batch) run time in this process, by queue",
    labelNames: ["queue"],
    buckets: [...latencyBuckets, 30, 45, 60],
    registers: [registry],
  });
  /** Handlers running in this process: queue and start (performance.now()) per run. */
  const running = new Map<symbol, { queue: string; started: number }>();
  new Gauge({
    name: "hotelops_job_running_longest_seconds",
    help: "How long the longest job handler still running in this process has run, by queue (0: none running); past the queue's expiry (45 s) it is hung",
    labelNames: ["queue"],
    registers: [registry],
    collect() {
      this.reset();
      const now = performance.now();
      const longest = new Map<string, number>();
      for (const r of running.values())
        longest.set(r.queue, Math.max(longest.get(r.queue) ?? 0, (now - r.started) / 1000));
      for (const [queue, seconds] of longest) this.set({ queue }, seconds);
    },
  });
  const partnerMessages = new Counter({
    name: "hotelops_partner_messages_total",
    help: "Partner messages applied by this process, by outcome (PROCESSED, REJECTED)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const partnerLag = new Histogram({
    name: "hotelops_partner_message_lag_seconds",
    help: "From a partner message's arrival (202) to its outcome",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300],
    registers: [registry],
  });
  const guestReports = new Counter({
    name: "hotelops_guest_report_attempts_total",
    help: "Attempts at guest reports to the authority (KBS), by sender and outcome (sent, retried, failed)",
    labelNames: ["sender", "outcome"],
    registers: [registry],
  });
  const pools = new Map<string, PoolCounts>();
  const poolGauge = (name: string, help: string, read: (p: PoolCounts) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ["pool"],
      registers: [registry],
      collect() {
        for (const [label, p] of pools) this.set({ pool: label }, read(p));
      },
    });
  };
  poolGauge(
    "hotelops_db_pool_connections_in_use",
    "Database connections checked out",
    (p) => p.totalCount - p.idleCount,
  );
  poolGauge("hotelops_db_pool_connections_idle", "Database connections open and idle", (p) => p.idleCount);
  poolGauge("hotelops_db_pool_waiting", "Queries waiting for a database connection", (p) => p.waitingCount);

  if (pool !== undefined) registerDatabaseGauges(registry, pool);

  return {
    registry,
    contentType: registry.contentType,
    observeCall(face, rpc, code, seconds) {
      const labels = { face, rpc, code };
      calls.inc(labels);
      latency.observe(labels, seconds);
    },
    jobFailed(queue) {
      jobFailures.inc({ queue });
    },
    jobStarted(queue) {
      const key = Symbol(queue);
      const started = performance.now();
      running.set(key, { queue, started });
      return () => {
        running.delete(key);
        jobDuration.observe({ queue }, (performance.now() - started) / 1000);
      };
    },
    partnerMessageApplied(outcome, receivedAt, now) {
      partnerMessages.inc({ outcome });
      partnerLag.observe(Math.max(0, (now.getTime() - receivedAt.getTime()) / 1000));
    },
    observeWebhookAttempts(list, now) {
      for (const a of list) {
        attempts.inc({ outcome: a.errorClass ?? "succeeded", attempt: String(Math.min(a.attempt, 8)) });
        if (a.attempt === 1 && a.eventCreatedAt)
          firstAttempt.observe(Math.max(0, (now.getTime() - a.eventCreatedAt.getTime()) / 1000));
      }
    },
    guestReportAttempt(sender, outcome) {
      guestReports.inc({ sender, outcome });
    },
    instrumentPool(name, p) {
      pools.set(name, p);
    },
    render: () => registry.metrics(),
  };
}

/**
 * Queue depth, oldest waiting job and retained failed jobs per queue, queued partner messages and the oldest one,
 * webhook addresses by state, and whether the database answered this scrape at all.
 */
function registerDatabaseGauges(registry: Registry, pool: pg.Pool): void {
  let snapshot:
    | Promise<{
        up: boolean;
        queues: QueueRow[];
        endpoints: { status: string; n: number }[];
        partner: { queued: number; oldest: number } | undefined;
      }>
    | undefined;
  // Several gauges read one snapshot per scrape (the first gauge's collect starts it, the registry awaits all).
  const read = (): NonNullable<typeof snapshot> => {
    if (snapshot !== undefined) return snapshot;
    // at most 2 s (as /readyz): behind PgBouncer a query waits for a server connection while the database is away
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("database did not answer within 2 s")), SCRAPE_DB_TIMEOUT_MS);
    });
    snapshot = Promise.race([
      timeout,
      Promise.all([
        pool.query<QueueRow>(
          `select q.name, count(*) filter (where j.state in ('created', 'retry'))::int as queued, count(*) filter (where j.state = 'active')::int as active,
                count(*) filter (where j.state = 'failed')::int as failed,
                coalesce(extract(epoch from now() - min(j.created_on) filter (where j.state in ('created', 'retry') and j.start_after <= now())), 0)::float8 as oldest
         from pgboss.queue q left join pgboss.job j on j.name = q.name group by q.name`,
        ),
        pool.query<{ status: string; n: number }>(
          "select status, count(*)::int as n from webhook_endpoints group by status",
        ),
        // the partial index of queued messages (reservation_events_pending) holds only these rows
        pool.query<{ queued: number; oldest: number }>(
          `select count(*)::int as queued, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest
         from partner_messages where status = 'QUEUED'`,
        ),
      ]),
    ])
      .finally(() => clearTimeout(timer))
      .then(
        ([q, e, p]) => ({ up: true, queues: q.rows, endpoints: e.rows, partner: p.rows[0] }),
        // the database is away: process figures still render, database ones are left out of this scrape
        () => ({ up: false, queues: [], endpoints: [], partner: undefined }),
      );
    const current = snapshot;
    setImmediate(() => (snapshot = undefined));
    return current;
  };
  const queueGauge = (name: string, help: string, pick: (r: QueueRow) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ["queue"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const r of (await read()).queues) this.set({ queue: r.name }, pick(r));
      },
    });
  };
  queueGauge("hotelops_queue_jobs_waiting", "Jobs waiting to run (created or retry), by queue", (r) => r.queued);
  queueGauge("hotelops_queue_jobs_active", "Jobs running, by queue", (r) => r.active);
  queueGauge("hotelops_queue_jobs_failed", "Failed jobs still retained, by queue", (r) => r.failed);
  queueGauge(
    "hotelops_queue_oldest_job_age_seconds",
    "Age of the oldest job due and not yet started, by queue",
    (r) => r.oldest,
  );
  new Gauge({
    name: "hotelops_database_up",
    help: "1 if the database answered this scrape's queries (through this process's pool), else 0",
    registers: [registry],
    async collect() {
      this.set((await read()).up ? 1 : 0);
    },
  });
  const partnerGauge = (name: string, help: string, pick: (p: { queued: number; oldest: number }) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        const partner = (await read()).partner;
        if (partner !== undefined) this.set(pick(partner));
      },
    });
  };
  partnerGauge(
    "hotelops_partner_messages_queued",
    "Partner messages received and not yet applied (database-wide)",
    (p) => p.queued,
  );
  partnerGauge(
    "hotelops_partner_messages_oldest_queued_seconds",
    "Age of the oldest partner message not yet applied (database-wide; 0: none)",
    (p) => p.oldest,
  );
  new Gauge({
    name: "hotelops_webhook_endpoints",
    help: "Webhook addresses by state (open, closed, disabled)",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of (await read()).endpoints) this.set({ state: r.status }, r.n);
    },
  });
}

interface QueueRow {
  name: string;
  queued: number;
  active: number;
  failed: number;
  oldest: number;
}
