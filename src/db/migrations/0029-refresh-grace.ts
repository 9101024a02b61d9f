import { Migration } from "@mikro-orm/migrations";

/**
 * A spent refresh token keeps the answer its rotation gave, sealed under a key derived from the token itself
 * (src/modules/auth/refresh-grace.ts): a retry of that rotation within the grace window is answered with it.
 */
export class Migration0029RefreshGrace extends Migration {
  override name = "0029-refresh-grace";

  override up(): void {
    this.addSql(`alter table refresh_tokens add column grace_answer bytea;`);
  }
}
