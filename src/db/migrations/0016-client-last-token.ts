import { Migration } from "@mikro-orm/migrations";

/** When the token endpoint last issued a client an access token (the panel's API access page shows it). */
export class Migration0016ClientLastToken extends Migration {
  override name = "0016-client-last-token";

  override up(): void {
    this.addSql("alter table api_clients add column last_token_at timestamptz;");
  }
}
