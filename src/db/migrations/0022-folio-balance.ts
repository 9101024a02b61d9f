import { Migration } from "@mikro-orm/migrations";

/**
 * A stored balance per folio (charges - payments, reversals included, in minor units), written in the same
 * statement as every charge and payment (folio.repository.ts), so the night audit's unbalanced-folio check reads
 * the folios whose balance is not zero through a partial index instead of summing the ledger of every folio the
 * hotel ever had. Existing folios get the sum of their ledger.
 */
/** Sets every folio's stored balance to the sum of its ledger (the backfill; also what the tests check against). */
export const folioBalanceBackfillSql = `update folios f set balance_minor =
    coalesce((select sum(c.amount_minor) from folio_charges c where c.property_id = f.property_id and c.folio_id = f.id), 0)
  - coalesce((select sum(p.amount_minor) from folio_payments p where p.property_id = f.property_id and p.folio_id = f.id), 0)`;

export class Migration0022FolioBalance extends Migration {
  override name = "0022-folio-balance";

  override up(): void {
    this.addSql(`
alter table folios add column balance_minor bigint not null default 0;
${folioBalanceBackfillSql};
create index folios_unbalanced on folios (property_id) where balance_minor <> 0;
`);
  }
}
