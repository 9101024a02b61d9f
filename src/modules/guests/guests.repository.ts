import type { Queryable } from "../../db/queryable.ts";
import type { KeyPage } from "../../lib/page.ts";

/** A guests row as stored: plain columns, the sealed sensitive fields and the document number's search hash. */
export interface GuestRow {
  id: string;
  groupId: string;
  createdPropertyId: string;
  givenName: string;
  familyName: string;
  nameWords: string;
  nationality: string;
  documentType: "" | "TC_KIMLIK" | "PASSPORT";
  documentCountry: string;
  documentExpiry: string;
  language: string;
  sealed: string;
  keyId: string;
  documentHash: Buffer | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the personal data was erased (EraseGuest); null otherwise. */
  erasedAt: Date | null;
}

const columns = `id, group_id as "groupId", created_property_id as "createdPropertyId", given_name as "givenName",
  family_name as "familyName", name_words as "nameWords", nationality, document_type as "documentType",
  document_country as "documentCountry", coalesce(to_char(document_expiry, 'YYYY-MM-DD'), '') as "documentExpiry",
  language, sealed, key_id as "keyId", document_hash as "documentHash", created_at as "createdAt",
  updated_at as "updatedAt", erased_at as "erasedAt"`;

const values = (r: GuestRow) => [
  r.id,
  r.groupId,
  r.createdPropertyId,
  r.givenName,
  r.familyName,
  r.nameWords,
  r.nationality,
  r.documentType,
  r.documentCountry,
  r.documentExpiry === "" ? null : r.documentExpiry,
  r.language,
  r.sealed,
  r.keyId,
  r.documentHash,
  r.createdAt,
  r.updatedAt,
];

export async function insertGuest(db: Queryable, r: GuestRow): Promise<void> {
  await db.query(
    `insert into guests (id, group_id, created_property_id, given_name, family_name, name_words, nationality,
       document_type, document_country, document_expiry, language, sealed, key_id, document_hash, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    values(r),
  );
}

/** Rewrites a guest's fields (the id, group and creation stay). */
export async function updateGuestRow(db: Queryable, r: GuestRow): Promise<void> {
  await db.query(
    `update guests set given_name = $3, family_name = $4, name_words = $5, nationality = $6, document_type = $7,
       document_country = $8, document_expiry = $9, language = $10, sealed = $11, key_id = $12, document_hash = $13,
       updated_at = $14
     where id = $1 and group_id = $2`,
    [r.id, r.groupId, ...values(r).slice(3, 14), r.updatedAt],
  );
}

/** The guest of this group (undefined for another group's guest: the caller answers 404). */
export async function findGuest(
  db: Queryable,
  groupId: string,
  id: string,
  lock = false,
): Promise<GuestRow | undefined> {
  const rows = await db.query<GuestRow>(
    `select ${columns} from guests where id = $1 and group_id = $2${lock ? " for update" : ""}`,
    [id, groupId],
  );
  return rows[0];
}

export async function guestsByDocumentHash(
  db: Queryable,
  groupId: string,
  hashes: readonly Buffer[],
  page: KeyPage,
): Promise<GuestRow[]> {
  return db.query<GuestRow>(
    `select ${columns} from guests where group_id = $1 and document_hash = any($2::bytea[]) ${afterKey}
      order by family_name, given_name, id limit $3`,
    [groupId, hashes, page.limit + 1, ...keyParams(page)],
  );
}

/** A search page starts after the previous page's last row in the answer's order (family name, given name, id). */
const afterKey = "and ($4::text is null or (family_name, given_name, id) > ($4::text, $5::text, $6::uuid))";
const keyParams = (page: KeyPage): (string | null)[] => [
  page.after?.[0] ?? null,
  page.after?.[1] ?? null,
  page.after?.[2] ?? null,
];

/** Guests whose name words start with every one of `words` (already normalised: letters and digits only). */
export async function guestsByNameWords(
  db: Queryable,
  groupId: string,
  words: readonly string[],
  page: KeyPage,
): Promise<GuestRow[]> {
  return db.query<GuestRow>(
    // one `like` per word (not `like all`): the trigram index answers each and intersects them
    `select ${columns} from guests where group_id = $1
        and ${words.map((_, i) => `name_words like ($2::text[])[${i + 1}]`).join(" and ")} ${afterKey}
      order by family_name, given_name, id limit $3`,
    [groupId, words.map((w) => `% ${w}%`), page.limit + 1, ...keyParams(page)],
  );
}

/** Up to `limit` rows sealed under another key than `keyId` (a rotation's next batch), locked. */
export async function guestsSealedUnderOtherKeys(db: Queryable, keyId: string, limit: number): Promise<GuestRow[]> {
  return db.query<GuestRow>(
    `select ${columns} from guests where key_id <> $1 order by id limit $2 for update skip locked`,
    [keyId, limit],
  );
}

export async function resealGuest(
  db: Queryable,
  id: string,
  sealed: string,
  keyId: string,
  documentHash: Buffer | null,
): Promise<void> {
  await db.query(`update guests set sealed = $2, key_id = $3, document_hash = $4 where id = $1`, [
    id,
    sealed,
    keyId,
    documentHash,
  ]);
}

/** The guests of this group among `ids` (another group's are left out), locked when asked, by id. */
export async function findGuestsByIds(
  db: Queryable,
  groupId: string,
  ids: readonly string[],
  lock = false,
): Promise<GuestRow[]> {
  if (ids.length === 0) return [];
  return db.query<GuestRow>(
    `select ${columns} from guests where id = any($1::uuid[]) and group_id = $2 order by id${lock ? " for update" : ""}`,
    [ids, groupId],
  );
}

/** Deletes the guests (their stays are gone first: merged). */
export async function deleteGuests(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query(`delete from guests where id = any($1::uuid[])`, [ids]);
}

/** Marks the guest erased (its fields were anonymised by updateGuestRow in the same transaction). */
export async function markGuestErased(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query(`update guests set erased_at = $2 where id = $1`, [id, at]);
}

/**
 * Up to `limit` guests not erased whose last stay's departure (or, without a stay, the profile's creation) fell in a
 * year more than `years` calendar years before `now`'s, locked (skipping rows another run holds).
 */
export async function guestsPastRetention(
  db: Queryable,
  lastStaySql: string,
  years: number,
  now: Date,
  limit: number,
): Promise<GuestRow[]> {
  return db.query<GuestRow>(
    `select ${columns} from guests g
      where g.erased_at is null
        and extract(year from coalesce((${lastStaySql}), g.created_at::date)) + $1 < extract(year from $2::timestamptz)
      order by g.id limit $3 for update of g skip locked`,
    [years, now, limit],
  );
}

/** The guests on a room line (guest_stays), in link order. */
export async function guestsOnLine(db: Queryable, reservationRoomId: string): Promise<GuestRow[]> {
  return db.query<GuestRow>(
    `select ${columns} from (select g.*, gs.linked_at as own_linked_at from guest_stays gs join guests g on g.id = gs.guest_id
                               where gs.reservation_room_id = $1) guests
      order by own_linked_at, id`,
    [reservationRoomId],
  );
}

/** The properties that created guest profiles (the retention run is recorded in their trails). */
export async function propertiesWithGuests(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ id: string }>(`select distinct created_property_id as id from guests order by 1`);
  return rows.map((r) => r.id);
}
