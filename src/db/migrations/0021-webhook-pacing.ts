import { Migration } from "@mikro-orm/migrations";

/**
 * Per-address pacing shared by every worker process: the last reserved start slot, a receiver's Retry-After
 * pause, and the concurrency permits held (`<expiry ms>|<batch id>`, each expiring with the claim's lease).
 * Its own table, so reserving does not queue behind the address row's health updates.
 */
export class Migration0021WebhookPacing extends Migration {
  override name = "0021-webhook-pacing";

  override up(): void {
    this.addSql(`
create table webhook_pacing (
  endpoint_id uuid primary key references webhook_endpoints(id) on delete cascade,
  next_start_at timestamptz not null,
  paused_until timestamptz,
  holds text[] not null default '{}'
);
`);
  }
}
