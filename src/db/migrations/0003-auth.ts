import { Migration } from "@mikro-orm/migrations";

/**
 * Staff sessions (mobile/panel) with rotating refresh tokens, and the seeded roles.
 *
 * A session is the unit that is revoked: every access token names it (`sid`) and the auth interceptor reads
 * it on each request, so logout and revocation act at once. It lasts 30 days at most (`expires_at`, never
 * extended). Refresh tokens form a chain per session: each use marks the token `used_at` and issues a child
 * (`parent_id`); presenting a used token again is reuse, and revokes the whole session.
 * Only SHA-256 hashes of refresh tokens are stored (they are 256-bit random, so a slow hash adds nothing).
 */
export class Migration0003Auth extends Migration {
  override name = "0003-auth";

  override up(): void {
    this.addSql(`
create table staff_sessions (
  id uuid primary key,
  user_id uuid not null references users(id),
  property_id uuid not null references properties(id),
  device_id text not null default '',
  device_name text not null default '',
  created_at timestamptz not null,
  expires_at timestamptz not null,
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text
);
create index staff_sessions_user on staff_sessions (user_id) where revoked_at is null;

create table refresh_tokens (
  id uuid primary key,
  session_id uuid not null references staff_sessions(id),
  token_hash text not null unique,
  parent_id uuid references refresh_tokens(id),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index refresh_tokens_session on refresh_tokens (session_id);

-- Signing order of JWT keys: the newest key signs, whatever the clock said when it was made.
alter table signing_keys add column seq bigint generated always as identity;

-- Role permission sets are data. manager holds every permission of src/modules/auth/principal.ts.
insert into roles (code, name, permissions) values
  ('manager', 'Manager', array['dashboard.view','reservations.view','reservations.create','reservations.update','reservations.cancel','reservations.override_price','frontdesk.check_in','frontdesk.check_out','folio.view','folio.post','invoices.issue','reports.read','night_audit.run','integrations.manage']),
  ('front_desk', 'Front desk', array['dashboard.view','reservations.view','reservations.create','reservations.update','reservations.cancel','frontdesk.check_in','frontdesk.check_out','folio.view','folio.post']),
  ('accountant', 'Accountant', array['dashboard.view','reservations.view','folio.view','folio.post','invoices.issue','reports.read']),
  ('viewer', 'Viewer', array['dashboard.view','reservations.view','folio.view'])
on conflict (code) do nothing;
    `);
  }
}
