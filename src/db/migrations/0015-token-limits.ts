import { Migration } from "@mikro-orm/migrations";

/**
 * Successful token requests per client per minute (null: RATE_LIMIT_TOKEN_PER_MINUTE). Token requests have their
 * own buckets, apart from staff login: many partner clients may share one egress IP.
 */
export class Migration0015TokenLimits extends Migration {
  override name = "0015-token-limits";

  override up(): void {
    this.addSql(
      "alter table api_clients add column token_requests_per_minute integer check (token_requests_per_minute > 0);",
    );
  }
}
