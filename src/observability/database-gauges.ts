import { Gauge, type Registry } from "prom-client";
import type pg from "pg";

// The database-wide gauges of the metrics registry (metrics.ts): read at scrape time, one snapshot per scrape.

const SCRAPE_DB_TIMEOUT_MS = 2_000;

/**
 * Queue depth, oldest waiting job and retained failed jobs per queue, queued partner messages and the oldest one,
 * webhook addresses by state, and whether the database answered this scrape at all.
 */
export function registerDatabaseGauges(registry: Registry, pool: pg.Pool): void {
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
