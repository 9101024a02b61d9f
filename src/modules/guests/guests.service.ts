import type pg from "pg";
import { AppError, invalidField } from "../../errors.ts";
import { poolQueryable } from "../../db/queryable.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, requireId } from "../../lib/ids.ts";
import { keyPageOf, keyPageResult } from "../../lib/page.ts";
import { recordChange } from "../audit/index.ts";
import { findPropertyById } from "../properties/index.ts";
import { createGuestCodec, type Guest } from "./codec.ts";
import { nameWords, normaliseDocumentNumber, sensitiveFields, validateGuest, type GuestFields } from "./fields.ts";
import {
  findGuest,
  guestsByDocumentHash,
  guestsByNameWords,
  guestsSealedUnderOtherKeys,
  insertGuest,
  resealGuest,
  updateGuestRow,
  type GuestRow,
} from "./guests.repository.ts";
import { createGuestKvkk, refuseErased } from "./kvkk.ts";
import { createGuestMerge } from "./merge.ts";
import { createGuestReporting } from "./reporting.ts";
import { createGuestStays } from "./stays.service.ts";
import type { GuestVault } from "./vault.ts";

/** Where a call acts: the caller's property (audit rows name it) and that property's hotel group (the guests'). */
export interface GuestScope {
  propertyId: string;
  groupId: string;
}

export type { Guest } from "./codec.ts";

export interface GuestSearch {
  documentNumber: string;
  name: string;
  limit: number;
  cursor: string;
}

export type GuestService = ReturnType<typeof createGuestService>;

export function createGuestService(deps: {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  vault: GuestVault;
  /** Full calendar years a guest report is kept (GUEST_REPORT_RETENTION_YEARS; default 5). */
  reportRetentionYears?: number;
}) {
  const { transact, clock, vault } = deps;
  const db = poolQueryable(deps.pool);

  const codec = createGuestCodec(vault, clock);
  const { openRow, fieldsOf, guestOf, rowOf, today } = codec;

  const found = (row: GuestRow | undefined): GuestRow => {
    if (row === undefined) throw new AppError("not_found", "Guest not found.");
    return row;
  };

  const reporting = createGuestReporting({
    transact,
    db,
    clock,
    vault,
    codec,
    retentionYears: deps.reportRetentionYears ?? 5,
  });

  return {
    reporting,
    ...createGuestStays({ transact, db, clock, codec, vault, reportLinked: reporting.reportLinkedInTx }),
    merge: createGuestMerge({ transact, codec }),
    ...createGuestKvkk({ transact, clock, codec }),

    /** The scope of a caller acting in `propertyId` (the property is already checked against the caller). */
    async scopeOf(propertyId: string): Promise<GuestScope> {
      const property = await findPropertyById(db, propertyId);
      if (property === undefined) throw new AppError("not_found", "Property not found.");
      return { propertyId, groupId: property.groupId };
    },

    /** Creates a guest of the scope's group; answers it masked (the caller just wrote its values). */
    async create(scope: GuestScope, input: GuestFields): Promise<Guest> {
      validateGuest(input, today());
      const now = clock.now();
      const row = rowOf(
        { id: newId(), groupId: scope.groupId, createdPropertyId: scope.propertyId, createdAt: now },
        input,
      );
      await transact(async (tx) => {
        await insertGuest(tx, row);
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: row.id,
          action: "create",
          after: input,
        });
      });
      return guestOf(row, false);
    },

    /**
     * One guest. With `reveal` (the caller holds guests.read_sensitive) the sensitive fields are answered in full
     * and the read is written to the audit trail; otherwise they are masked.
     */
    async get(scope: GuestScope, guestId: string, reveal: boolean): Promise<Guest> {
      const id = requireId(guestId, "Guest");
      if (!reveal) return guestOf(found(await findGuest(db, scope.groupId, id)), false);
      return transact(async (tx: Tx) => {
        const row = found(await findGuest(tx, scope.groupId, id));
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: id,
          action: "read_sensitive",
          after: { fieldsRead: [...sensitiveFields] },
        });
        return guestOf(row, true);
      });
    },

    /** Changes the fields given (undefined keeps a field); answers the guest masked. */
    async update(scope: GuestScope, guestId: string, patch: Partial<GuestFields>): Promise<Guest> {
      const id = requireId(guestId, "Guest");
      return transact(async (tx) => {
        const before = found(await findGuest(tx, scope.groupId, id, true));
        refuseErased(before);
        const old = fieldsOf(before);
        const next: GuestFields = { ...old };
        for (const [k, v] of Object.entries(patch))
          if (v !== undefined) (next as unknown as Record<string, string>)[k] = v;
        validateGuest(next, today());
        const row = rowOf(before, next);
        await updateGuestRow(tx, row);
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: id,
          action: "modify",
          before: old,
          after: next,
        });
        return guestOf(row, false);
      });
    },

    /** Guests of the group by document number (its keyed hash) or by name; always masked. */
    async search(scope: GuestScope, q: GuestSearch): Promise<{ guests: Guest[]; nextCursor: string }> {
      const page = keyPageOf({ limit: q.limit === 0 ? 20 : q.limit, cursor: q.cursor }, 50, ["text", "text", "uuid"]);
      const number = normaliseDocumentNumber(q.documentNumber);
      if ((number === "") === (q.name.trim() === ""))
        throw invalidField("documentNumber", "give exactly one of documentNumber and name");
      let rows: GuestRow[];
      if (number !== "") rows = await guestsByDocumentHash(db, scope.groupId, vault.hashes(number), page);
      else {
        const words = nameWords(q.name);
        if (words.join("").length < 2) throw invalidField("name", "at least 2 letters or digits");
        rows = await guestsByNameWords(db, scope.groupId, words.slice(0, 5), page);
      }
      const { items, nextCursor } = keyPageResult(rows, page.limit, (r) => [r.familyName, r.givenName, r.id]);
      return { guests: items.map((r) => guestOf(r, false)), nextCursor };
    },

    /**
     * Re-seals (and re-hashes) up to `batch` guests still sealed under a previous key with the current one;
     * returns how many it changed (0: every row is under the current key and the previous keys can go).
     */
    async rotateKeys(batch = 500): Promise<number> {
      return transact(async (tx) => {
        const rows = await guestsSealedUnderOtherKeys(tx, vault.keyId, batch);
        for (const row of rows) {
          const sensitive = openRow(row);
          const hash = sensitive.documentNumber === "" ? null : vault.hash(sensitive.documentNumber);
          await resealGuest(tx, row.id, vault.seal(JSON.stringify(sensitive), row.id), vault.keyId, hash);
        }
        return rows.length;
      });
    },
  };
}
