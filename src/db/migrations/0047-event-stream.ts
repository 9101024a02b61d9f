import { Migration } from "@mikro-orm/migrations";

/**
 * The event stream (EventService.StreamEvents) reads a property's domain events in the order of their
 * transactions: each row records the id of the transaction that wrote it (`tx_id`, pg_current_xact_id()), and a
 * reader delivers only rows whose transaction is older than its snapshot's xmin, i.e. every transaction that could
 * still add a row before them has finished. Rows written before this migration get 0 (they all committed long ago)
 * and keep their id order among themselves. The constant default first, then the function: no table rewrite.
 */
export class Migration0047EventStream extends Migration {
  override name = "0047-event-stream";

  override up(): void {
    this.addSql(`alter table domain_events add column tx_id xid8 not null default '0';`);
    this.addSql(`alter table domain_events alter column tx_id set default pg_current_xact_id();`);
    this.addSql(`create index domain_events_stream on domain_events (property_id, tx_id, id);`);
  }
}
