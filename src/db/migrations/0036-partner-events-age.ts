import { Migration } from "@mikro-orm/migrations";

/**
 * Partner events are kept as long as their delivery history (see partnerEventRetentionDays): the daily purge finds
 * each batch of old ones through their age, without scanning the whole log.
 */
export class Migration0036PartnerEventsAge extends Migration {
  override name = "0036-partner-events-age";

  override up(): void {
    this.addSql(`create index partner_events_age on partner_events (created_at);`);
  }
}
