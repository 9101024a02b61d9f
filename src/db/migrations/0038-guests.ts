import { Migration } from "@mikro-orm/migrations";

/**
 * Guest profiles (src/modules/guests), one per person and shared by the properties of a hotel group. Names,
 * nationality, the document's type, issuing country and expiry and the language are plain columns; the document
 * number, birth date, e-mail, phone, address and notes are one AES-256-GCM sealed JSON value (`sealed`, naming
 * its key id; the row id is the additional data). `document_hash` is the HMAC of the normalised document number
 * (the only way to find a guest by document); `name_words` holds the names lower-cased without accents for the
 * name search. `guests.read_sensitive` lets staff read the sealed fields (managers hold it).
 */
export class Migration0038Guests extends Migration {
  override name = "0038-guests";

  override up(): void {
    this.addSql(`
      create table guests (
        id uuid primary key,
        group_id uuid not null references hotel_groups(id),
        created_property_id uuid not null references properties(id),
        given_name text not null,
        family_name text not null,
        name_words text not null,
        nationality text not null default '',
        document_type text not null default '' check (document_type in ('', 'TC_KIMLIK', 'PASSPORT')),
        document_country text not null default '',
        document_expiry date,
        language text not null default '',
        sealed text not null,
        key_id text not null,
        document_hash bytea,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index guests_document on guests (group_id, document_hash) where document_hash is not null;
      create index guests_name on guests (group_id, family_name, id);
      create index guests_key on guests (key_id);
      update roles set permissions = array_append(permissions, 'guests.read_sensitive') where code = 'manager' and not ('guests.read_sensitive' = any(permissions));
    `);
  }
}
