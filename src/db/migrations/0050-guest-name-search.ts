import { Migration } from "@mikro-orm/migrations";

/**
 * The guest search by name finds words by prefix anywhere in `name_words` (`like '% word%'`): a trigram index
 * (pg_trgm, a trusted extension PostgreSQL ships, which the database owner may create) answers it without reading
 * every guest of the group.
 */
export class Migration0050GuestNameSearch extends Migration {
  override name = "0050-guest-name-search";

  override up(): void {
    this.addSql(`
      create extension if not exists pg_trgm;
      create index guests_name_words on guests using gin (name_words gin_trgm_ops);
    `);
  }
}
