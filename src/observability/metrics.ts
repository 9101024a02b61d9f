import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type pg from "pg";
import { collectProcessMetrics } from "./process-metrics.ts";
import { registerDatabaseGauges } from "./database-gauges.ts";

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
