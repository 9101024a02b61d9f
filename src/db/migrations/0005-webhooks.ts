import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook addresses, their deliveries and attempt history, and panel notifications.
 * Signing secrets are stored AES-256-GCM sealed (never in clear); request bodies are never stored.
 */
export class Migration0005Webhooks extends Migration {
  override name = "0005-webhooks";

  override up(): void {
    this.addSql(`
create table webhook_endpoints (
  id uuid primary key,
  property_id uuid not null references properties(id),
  url text not null,
  description text not null default '',
  event_types text[] not null,
  status text not null check (status in ('open', 'closed', 'disabled')),
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  created_by uuid references users(id),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  closed_at timestamptz,
  closed_reason text,
  last_success_at timestamptz,
  -- First failed attempt since the last success, and the failures counted since then (auto-close rule).
  failing_since timestamptz,
  failures_since_success integer not null default 0
);
create index webhook_endpoints_property on webhook_endpoints (property_id, created_at);

create table webhook_deliveries (
  id uuid primary key,
  property_id uuid not null references properties(id),
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  event_id uuid not null,
  event_type text not null,
  -- webhook.test has no row in events: its data is fixed and rebuilt from the delivery.
  is_test boolean not null default false,
  resend_of uuid,
  status text not null check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts integer not null default 0,
  first_attempt_at timestamptz,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  -- A worker that claimed an attempt holds it until then; a crashed worker's claim lapses and is taken over.
  lease_until timestamptz,
  last_http_status integer,
  last_error_class text,
  created_at timestamptz not null
);
-- One fan-out delivery per address and event, however often the fan-out job runs.
create unique index webhook_deliveries_fanout on webhook_deliveries (endpoint_id, event_id) where resend_of is null and not is_test;
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at);

create table webhook_attempts (
  id uuid primary key,
  property_id uuid not null references properties(id),
  endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
  delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
  event_id uuid not null,
  event_type text not null,
  attempt integer not null,
  http_status integer,
  duration_ms integer not null,
  error_class text,
  error_message text,
  started_at timestamptz not null,
  finished_at timestamptz not null,
  unique (delivery_id, attempt)
);
create index webhook_attempts_history on webhook_attempts (endpoint_id, started_at desc, id desc);
create index webhook_attempts_age on webhook_attempts (started_at);

create table notifications (
  id uuid primary key,
  property_id uuid not null references properties(id),
  user_id uuid not null references users(id),
  kind text not null,
  title text not null,
  body text not null,
  data jsonb not null default '{}',
  created_at timestamptz not null,
  read_at timestamptz
);
create index notifications_user on notifications (user_id, property_id, created_at desc);
    `);
  }
}
