import { Migration } from "@mikro-orm/migrations";

/**
 * Who charged a price other than the daily prices, and when: set only by a create that asked for an override
 * explicitly (`priceOverride`) and held `reservations.override_price`. `price_listed_minor` keeps the sum of
 * the daily prices that was overridden.
 */
export class Migration0012PriceOverride extends Migration {
  override name = "0012-price-override";

  override up(): void {
    this.addSql(`alter table reservations
      add column price_override_by text,
      add column price_override_at timestamptz,
      add column price_listed_minor bigint,
      add constraint reservations_price_override_check check ((price_override_by is null) = (price_override_at is null) and (price_override_by is null) = (price_listed_minor is null));`);
  }
}
