import { Migration } from "@mikro-orm/migrations";

/**
 * Partner callbacks: a webhook address may belong to a partner API client (`client_id`) instead of a hotel. It
 * is added by a property's manager (then `property_id` is that property and only its events are sent) or by an
 * operator (`property_id` null: every property granted to the client). The same engine sends to it: deliveries,
 * attempts, history, resend and auto-close are the hotel's. `partner_events` is the outbound log of events meant
 * for one client only (the outcome of its messages, ARI pushed in its codes), fanned out like `domain_events`.
 * `ari_push_cursors` is the last ARI feed sequence pushed per property (what the ARI pusher has published).
 */
export class Migration0032PartnerCallbacks extends Migration {
  override name = "0032-partner-callbacks";

  override up(): void {
    this.addSql(`
      alter table webhook_endpoints add column client_id text references api_clients(id);
      alter table webhook_endpoints alter column property_id drop not null;
      alter table webhook_endpoints add constraint webhook_endpoints_owner check (client_id is not null or property_id is not null);
      create index webhook_endpoints_client on webhook_endpoints (client_id, created_at) where client_id is not null;

      create table partner_events (
        id uuid primary key,
        client_id text not null references api_clients(id),
        property_id uuid not null references properties(id),
        type text not null,
        occurred_at timestamptz not null,
        created_at timestamptz not null default now(),
        data jsonb not null
      );
      create index partner_events_client on partner_events (client_id, created_at);

      create table ari_push_cursors (
        property_id uuid primary key references properties(id),
        seq bigint not null,
        pushed_at timestamptz not null
      );
    `);
  }
}
