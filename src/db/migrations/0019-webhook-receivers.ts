import { Migration } from "@mikro-orm/migrations";

/**
 * Webhooks any receiver keeps up with: optional ed25519 keys per address (sealed, with the pre-rotation key
 * during the secret's overlap), a per-address rate and concurrency limit, recoveries (re-sending what failed
 * since a given time) and the per-address index the throttled dispatcher reads. Events get `created_at` from
 * the insert's own clock (see recordEvents), never the transaction start.
 */
export class Migration0019WebhookReceivers extends Migration {
  override name = "0019-webhook-receivers";

  override up(): void {
    this.addSql(`
alter table webhook_endpoints
  add column ed25519_key_sealed text,
  add column ed25519_public_key text,
  add column previous_ed25519_key_sealed text,
  add column previous_ed25519_public_key text,
  add column max_per_second integer not null default 50 check (max_per_second between 1 and 1000),
  add column max_concurrency integer not null default 10 check (max_concurrency between 1 and 64);

create table webhook_recoveries (
  id uuid primary key,
  property_id uuid not null references properties(id),
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  since timestamptz not null,
  status text not null check (status in ('running', 'done')),
  events_total integer,
  created_by uuid references users(id),
  created_at timestamptz not null,
  finished_at timestamptz
);
-- One running recovery per address: asking again while it runs answers that one.
create unique index webhook_recoveries_running on webhook_recoveries (endpoint_id) where status = 'running';
create index webhook_recoveries_endpoint on webhook_recoveries (endpoint_id, created_at desc);

alter table webhook_deliveries add column recovery_id uuid references webhook_recoveries(id) on delete set null;
drop index webhook_deliveries_fanout;
create unique index webhook_deliveries_fanout on webhook_deliveries (endpoint_id, event_id) where resend_of is null and recovery_id is null and not is_test;
-- A recovery sends each event once, however often its job runs.
create unique index webhook_deliveries_recovery on webhook_deliveries (recovery_id, event_id) where recovery_id is not null;
create index webhook_deliveries_endpoint_due on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';
-- A recovery walks an address's deliveries by event (and checks whether an event already got through).
create index webhook_deliveries_endpoint_event on webhook_deliveries (endpoint_id, event_id);
`);
  }
}
