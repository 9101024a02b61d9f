import { Migration } from "@mikro-orm/migrations";

/** E-mail verification of mobile logins: one row per challenge; the 6-digit code is stored as an argon2 hash. */
export class Migration0009LoginChallenges extends Migration {
  override name = "0009-login-challenges";

  override up(): void {
    this.addSql(`
      create table login_challenges (
        id uuid primary key,
        user_id uuid not null references users(id),
        property_id uuid not null references properties(id),
        code_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        failed_attempts integer not null default 0,
        used_at timestamptz
      );
      create index login_challenges_user on login_challenges (user_id, created_at);
    `);
  }
}
