import { Migration } from "@mikro-orm/migrations";

/**
 * The audit trail (src/modules/audit): one row per change of a business record, partitioned by month on `at`
 * (UTC months, partitions named `audit_changes_yYYYYmMM`) so the year's retention is a partition drop. The
 * `audit.partitions` job creates the months ahead and drops the ones older than twelve months; the migration
 * creates this month and the next three. A change outside every monthly partition (the job has not run for
 * months) lands in the default partition instead of failing the business write; the job moves such rows into
 * their month when it creates it. `audit.read` lets staff read the trail (managers hold it).
 */
export class Migration0030AuditTrail extends Migration {
  override name = "0030-audit-trail";

  override up(): void {
    this.addSql(`
      create table audit_changes (
        id uuid not null,
        at timestamptz not null default now(),
        property_id uuid not null,
        entity_type text not null,
        entity_id text not null,
        action text not null,
        actor_kind text not null,
        actor_id text not null,
        face text not null,
        request_id text not null,
        changes jsonb not null
      ) partition by range (at);
      create index audit_changes_property on audit_changes (property_id, at, id);
      create index audit_changes_entity on audit_changes (property_id, entity_type, entity_id, at, id);
      create table audit_changes_default partition of audit_changes default;
      do $$
      declare m timestamptz := date_trunc('month', now() at time zone 'UTC') at time zone 'UTC';
      begin
        for i in 0..3 loop
          execute format('create table %I partition of audit_changes for values from (%L) to (%L)',
            'audit_changes_' || to_char((m + make_interval(months => i)) at time zone 'UTC', '"y"YYYY"m"MM'),
            m + make_interval(months => i), m + make_interval(months => i + 1));
        end loop;
      end $$;
      update roles set permissions = array_append(permissions, 'audit.read') where code = 'manager' and not ('audit.read' = any(permissions));
    `);
  }
}
