import { AppError, invalidField } from "../../errors.ts";
import type { Transact } from "../../db/transaction.ts";
import { isUuid } from "../../lib/ids.ts";
import { recordChange } from "../audit/index.ts";
import type { Guest, GuestCodec } from "./codec.ts";
import { validateGuest, type GuestFields } from "./fields.ts";
import { deleteGuests, findGuestsByIds, updateGuestRow } from "./guests.repository.ts";
import type { GuestScope } from "./guests.service.ts";
import { moveStays } from "./stays.repository.ts";

const maxDuplicates = 10;
/** Taken together: a document is one thing, never half of one profile's and half of another's. */
const documentFields = ["documentType", "documentNumber", "documentCountry", "documentExpiry"] as const;

/**
 * The kept guest's fields with its empty ones taken from the duplicates (the first that has a value; the
 * document as a whole, only when the kept guest has none).
 */
function mergedFields(kept: GuestFields, duplicates: readonly GuestFields[]): GuestFields {
  const out: GuestFields = { ...kept };
  const fill = out as unknown as Record<string, string>;
  for (const d of duplicates) {
    for (const [k, v] of Object.entries(d) as [keyof GuestFields, string][])
      if (!(documentFields as readonly string[]).includes(k) && fill[k] === "" && v !== "") fill[k] = v;
    if (out.documentNumber === "" && d.documentNumber !== "") for (const k of documentFields) fill[k] = d[k];
  }
  return out;
}

/** MergeGuests: duplicates of one person merged into the kept guest, their stays moved, then deleted. */
export function createGuestMerge(deps: { transact: Transact; codec: GuestCodec }) {
  const { transact, codec } = deps;
  return async function merge(
    scope: GuestScope,
    guestId: string,
    duplicateIds: readonly string[],
  ): Promise<{ guest: Guest; staysMoved: number }> {
    if (guestId === "") throw invalidField("guestId", "is required");
    if (!isUuid(guestId)) throw new AppError("not_found", "Guest not found.");
    const dups = [...new Set(duplicateIds)];
    if (dups.length < 1 || dups.length > maxDuplicates)
      throw invalidField("duplicateGuestIds", `1-${maxDuplicates} guest ids`);
    if (dups.includes(guestId)) throw invalidField("duplicateGuestIds", "must not hold the kept guest");
    // a malformed id names no guest: 404 like another group's
    if (!dups.every(isUuid)) throw new AppError("not_found", "Guest not found.");
    return transact(async (tx) => {
      const rows = await findGuestsByIds(tx, scope.groupId, [guestId, ...dups], true);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const kept = byId.get(guestId);
      if (kept === undefined || rows.length !== dups.length + 1) throw new AppError("not_found", "Guest not found.");
      const before = codec.fieldsOf(kept);
      const after = mergedFields(
        before,
        dups.map((id) => codec.fieldsOf(byId.get(id)!)),
      );
      validateGuest(after, codec.today());
      const row = codec.rowOf(kept, after);
      const staysMoved = await moveStays(tx, dups, guestId);
      await deleteGuests(tx, dups);
      await updateGuestRow(tx, row);
      recordChange(tx, {
        propertyId: scope.propertyId,
        entity: "guest",
        entityId: guestId,
        action: "merge",
        before,
        after: { ...after, mergedGuestIds: dups, staysMoved },
      });
      for (const id of dups)
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: id,
          action: "merged_into",
          after: { guestId },
        });
      return { guest: codec.guestOf(row, false), staysMoved };
    });
  };
}
