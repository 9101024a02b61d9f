import { Migration } from "@mikro-orm/migrations";

/**
 * One name, one meaning. `reservation_events` held the partners' inbound reservation messages and `events` our
 * outbound domain events (what webhooks and the change feed publish): both were "reservation events" in speech.
 * Inbound messages become `partner_messages`, outbound events `domain_events`. Indexes, constraints and the
 * identity column follow the table (PostgreSQL renames in place; nothing is copied).
 */
export class Migration0017MessageAndEventNames extends Migration {
  override name = "0017-message-and-event-names";

  override up(): void {
    this.addSql("alter table reservation_events rename to partner_messages;");
    this.addSql("alter table events rename to domain_events;");
  }
}
