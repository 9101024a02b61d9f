import { Migration } from "@mikro-orm/migrations";

/**
 * `staff_sessions.email_verified`: the session was opened by an e-mail code (login to a property with e-mail
 * verification). Switching the session into such a property needs it, so a session is only as trusted as its
 * login. Sessions from before this migration count as unverified (their users sign in again to switch there).
 */
export class Migration0018SessionEmailVerified extends Migration {
  override name = "0018-session-email-verified";

  override up(): void {
    this.addSql("alter table staff_sessions add column email_verified boolean not null default false;");
  }
}
