import { Migration } from "@mikro-orm/migrations";

/**
 * Idempotency and rate limits (src/modules/platform): idempotency rows also keep a replayed error outcome and
 * the response headers, and an in-progress claim holds a lease so a crashed process does not block its key
 * for 24 hours. Both tables get an index for the purge job; rate-limit counters become unlogged.
 */
export class Migration0006Platform extends Migration {
  override name = "0006-platform";

  override up(): void {
    this.addSql(`
alter table idempotency_keys
  add column response_headers jsonb,
  add column error jsonb,
  add column locked_until timestamptz;
create index idempotency_keys_expires_at on idempotency_keys (expires_at);
create index rate_limits_window_start on rate_limits (window_start);
-- Counters are worth less than the latency of a WAL flush per request: unlogged, so the per-request upsert commits
-- without waiting for fsync (bench/ratelimit.bench.ts). A crash empties the table, which only forgives one window.
alter table rate_limits set unlogged;
    `);
  }
}
