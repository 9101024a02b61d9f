import { Migration } from "@mikro-orm/migrations";

/**
 * Reservation codes numbered per property, and e-mail addresses in one Unicode form.
 *
 * Codes: `reservation_code_counters` holds each property's last reservation number (the reservations module's
 * table). A create takes the next number with its insert and the row stays locked until that transaction ends, so
 * a property's codes are gap-free (a rolled-back create gives its number back) and say nothing about another
 * property's bookings. Existing codes stay as they are: each property continues after its own highest `R<n>`
 * code (100000 when it has none), and a number some row of the property already uses is skipped. The global
 * `reservation_code_seq` is no longer used by this version; it stays so that a process of the previous version
 * still running during a rolling start can book (the counter skips the codes it gives).
 *
 * E-mail addresses: `users.email` is rewritten to NFC with a lower-cased domain (the rule of
 * src/lib/email-address.ts, repeated here so this migration keeps its meaning). Accounts whose addresses become
 * the same (a composed and a decomposed "josé", or "A@X.COM" beside "a@x.com"; compared as the unique index does,
 * by lower()): the oldest account keeps the address, normalised; each later one is deactivated and its address
 * becomes `<normalised address>.duplicate-<user id>.invalid` (unique, undeliverable, still readable). Logins would
 * not find it any more anyway. Its memberships stay; the operator grants them to the kept account if wanted.
 */
export class Migration0033PropertyCodesAndEmails extends Migration {
  override name = "0033-property-codes-and-emails";

  override async up(): Promise<void> {
    await this.execute(`create table reservation_code_counters (
      property_id uuid primary key references properties(id),
      last_number bigint not null check (last_number >= 100000)
    )`);
    await this.execute(`insert into reservation_code_counters (property_id, last_number)
      select p.id, coalesce(max(substr(r.code, 2)::bigint) filter (where r.code ~ '^R[0-9]{1,15}$'), 100000)
        from properties p left join reservations r on r.property_id = p.id
       group by p.id`);

    const users = (await this.execute("select id, email from users")) as { id: string; email: string }[];
    const normal = users.map(({ id, email }) => {
      const nfc = email.trim().normalize("NFC");
      const at = nfc.lastIndexOf("@");
      return { id, normal: at === -1 ? nfc : `${nfc.slice(0, at)}@${nfc.slice(at + 1).toLowerCase()}` };
    });
    if (normal.length === 0) return;
    await this.execute(
      `create temporary table normalised_emails on commit drop as
         select x.id, x.normal, u.created_at from jsonb_to_recordset(?::jsonb) as x(id uuid, normal text)
           join users u on u.id = x.id`,
      [JSON.stringify(normal)],
    );
    await this.execute(`create temporary table email_keepers on commit drop as
      select distinct on (lower(normal)) id, normal from normalised_emails order by lower(normal), created_at, id`);
    await this.execute(`update users u set active = false, email = n.normal || '.duplicate-' || u.id || '.invalid'
      from normalised_emails n
     where n.id = u.id and not exists (select 1 from email_keepers k where k.id = u.id)`);
    await this.execute(
      `update users u set email = k.normal from email_keepers k where k.id = u.id and u.email <> k.normal`,
    );
  }
}
