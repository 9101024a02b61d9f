import { Migration } from "@mikro-orm/migrations";

/**
 * Connectivity: per-provider code mappings and the one common queue of inbound reservation events.
 * Events are applied in `seq` order per (property, external_reference); `seq` is only an ordering key.
 */
export class Migration0008Connectivity extends Migration {
  override name = "0008-connectivity";

  override up(): void {
    this.addSql(`
      create table provider_mappings (
        property_id uuid not null references properties(id),
        provider text not null,
        kind text not null check (kind in ('property', 'room_type', 'rate_plan')),
        internal_id uuid not null,
        external_code text not null check (length(external_code) between 1 and 100),
        updated_at timestamptz not null default now(),
        primary key (property_id, provider, kind, internal_id)
      );
      create unique index provider_mappings_external on provider_mappings (property_id, provider, kind, external_code);

      create table reservation_events (
        id uuid primary key,
        seq bigserial not null,
        property_id uuid not null references properties(id),
        client_id text not null,
        provider text not null,
        event_type text not null check (event_type in ('NEW', 'MODIFIED', 'CANCELLED')),
        external_reference text not null,
        payload jsonb not null,
        status text not null default 'QUEUED' check (status in ('QUEUED', 'PROCESSED', 'REJECTED')),
        reservation_id uuid,
        reservation_code text,
        error text,
        attempts integer not null default 0,
        created_at timestamptz not null default now(),
        processed_at timestamptz
      );
      create index reservation_events_pending on reservation_events (property_id, external_reference, seq) where status = 'QUEUED';
      create index reservation_events_property on reservation_events (property_id, created_at);
    `);
  }
}
