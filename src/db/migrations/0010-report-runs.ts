import { Migration } from "@mikro-orm/migrations";

/** Mobile report runs: which report, over which days, run by whom, and how many rows it found (no row data). */
export class Migration0010ReportRuns extends Migration {
  override name = "0010-report-runs";

  override up(): void {
    this.addSql(`
      create table report_runs (
        id uuid primary key,
        property_id uuid not null references properties(id),
        report_id text not null,
        start_date date not null,
        end_date date not null check (end_date >= start_date),
        user_id uuid not null references users(id),
        session_id uuid not null,
        row_count integer not null,
        truncated boolean not null,
        created_at timestamptz not null
      );
      create index report_runs_property on report_runs (property_id, created_at);
    `);
  }
}
