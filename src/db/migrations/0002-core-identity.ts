import { Migration } from "@mikro-orm/migrations";

/**
 * The shared core every module stands on: hotel groups, properties, roles, users, memberships, machine clients,
 * JWT signing keys, the event log, idempotency keys and rate-limit counters.
 * Money columns elsewhere are bigint minor units with the property's amount_scale; rates are basis points.
 */
export class Migration0002CoreIdentity extends Migration {
  override name = "0002-core-identity";

  override up(): void {
    this.addSql(`
create table hotel_groups (
  id uuid primary key,
  code text not null unique check (code ~ '^[A-Z0-9][A-Z0-9_-]{1,31}$'),
  name text not null,
  active boolean not null default true,
  created_at timestamptz not null default now()
);

create table properties (
  id uuid primary key,
  group_id uuid not null references hotel_groups(id),
  code text not null unique check (code ~ '^[A-Z0-9][A-Z0-9_-]{1,31}$'),
  name text not null,
  time_zone text not null,
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  amount_scale integer not null default 100 check (amount_scale in (1, 10, 100, 1000)),
  vat_rate_bp integer not null default 1000 check (vat_rate_bp between 0 and 10000),
  accommodation_tax_rate_bp integer not null default 200 check (accommodation_tax_rate_bp between 0 and 10000),
  business_date date not null,
  email_verification boolean not null default false,
  sandbox boolean not null default false,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table roles (
  code text primary key,
  name text not null,
  permissions text[] not null
);

create table users (
  id uuid primary key,
  email text not null,
  name text not null default '',
  password_hash text not null,
  active boolean not null default true,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table memberships (
  id uuid primary key,
  user_id uuid not null references users(id),
  property_id uuid not null references properties(id),
  role_code text not null references roles(code),
  active boolean not null default true,
  created_at timestamptz not null default now(),
  unique (user_id, property_id)
);

create table api_clients (
  id text primary key,
  kind text not null check (kind in ('partner', 'internal')),
  provider text not null,
  name text not null default '',
  secret_hash text not null,
  scopes text[] not null default '{}',
  environment text not null default 'test' check (environment in ('test', 'live')),
  rate_limit_per_minute integer not null default 600 check (rate_limit_per_minute > 0),
  active boolean not null default true,
  created_at timestamptz not null default now(),
  approved_at timestamptz
);

create table api_client_properties (
  client_id text not null references api_clients(id),
  property_id uuid not null references properties(id),
  primary key (client_id, property_id)
);

create table signing_keys (
  kid text primary key,
  alg text not null,
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);

-- The event log: one row per domain event, written in the transaction of the change. Webhooks fan out from it.
create table events (
  id uuid primary key,
  property_id uuid not null references properties(id),
  type text not null,
  occurred_at timestamptz not null,
  created_at timestamptz not null default now(),
  data jsonb not null
);
create index events_property_created on events (property_id, created_at);

-- Idempotency keys of writes: first response kept for replay, 24 h at least.
create table idempotency_keys (
  caller text not null,
  key text not null,
  rpc text not null,
  request_hash text not null,
  state text not null check (state in ('in_progress', 'done')),
  response bytea,
  response_status integer,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (caller, key)
);

-- Fixed-window rate limit counters shared by every process.
create table rate_limits (
  bucket text not null,
  window_start timestamptz not null,
  count integer not null,
  primary key (bucket, window_start)
);
    `);
  }
}
