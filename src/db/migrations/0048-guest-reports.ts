import { Migration } from "@mikro-orm/migrations";

/**
 * Guest reporting to the police or gendarmerie (KBS, Law 1774; src/modules/guests/reporting.ts): one row per
 * occupant of a room line and movement (check-in, check-out), written in the movement's transaction with its
 * pg-boss job. `sealed` holds the notification's personal fields (document, names, nationality, birth date) under the
 * guest data vault; the rest says where the stay is and how its sending went: `pending` (queued, or retried after an
 * error), `sent` (with the authority's `reference`), `failed` (retries exhausted) or `incomplete` (the occupant's
 * record lacks the document, birth date or nationality: not sent, listed). `guest_id` is null for a line checked in
 * without guests. Rows are kept until `keep_until` (GUEST_REPORT_RETENTION_YEARS), then the retention job deletes
 * them. `guests.report` (ListGuestReports) goes to managers and the front desk.
 */
export class Migration0048GuestReports extends Migration {
  override name = "0048-guest-reports";

  override up(): void {
    this.addSql(`
      create table guest_reports (
        id uuid primary key,
        property_id uuid not null references properties(id),
        group_id uuid not null references hotel_groups(id),
        reservation_id uuid not null,
        reservation_room_id uuid not null,
        guest_id uuid,
        movement text not null check (movement in ('check_in', 'check_out')),
        business_date date not null,
        status text not null check (status in ('pending', 'sent', 'failed', 'incomplete')),
        missing text[] not null default '{}',
        sealed text not null,
        key_id text not null,
        attempts integer not null default 0,
        last_error text,
        reference text,
        sent_at timestamptz,
        created_at timestamptz not null,
        keep_until date not null
      );
      create index guest_reports_property on guest_reports (property_id, created_at desc, id desc);
      create index guest_reports_open on guest_reports (property_id, status) where status <> 'sent';
      create index guest_reports_line on guest_reports (reservation_room_id);
      create index guest_reports_keep on guest_reports (keep_until);
      update roles set permissions = array_append(permissions, 'guests.report') where code in ('manager', 'front_desk') and not ('guests.report' = any(permissions));
    `);
  }
}
