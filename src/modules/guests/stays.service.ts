import { AppError, invalidField } from "../../errors.ts";
import type { Queryable } from "../../db/queryable.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, requireId } from "../../lib/ids.ts";
import { pageOf, pageResult } from "../../lib/page.ts";
import { recordChange } from "../audit/index.ts";
import { findRoomLineRef, type RoomLineRef } from "../reservations/index.ts";
import type { Guest, GuestCodec } from "./codec.ts";
import {
  emptyGuestFields,
  nameWords,
  normaliseDocumentNumber,
  sensitiveFields,
  validateGuest,
  type GuestFields,
} from "./fields.ts";
import { findGuest, findGuestsByIds, guestsByDocumentHash, insertGuest, updateGuestRow } from "./guests.repository.ts";
import type { GuestScope } from "./guests.service.ts";
import { deleteStay, guestIdsOfLines, insertStay, staysOfGuest, type StayRow } from "./stays.repository.ts";
import { refuseErased } from "./kvkk.ts";
import type { GuestVault } from "./vault.ts";

/** A request's guest id: 400 when absent, 404 when it names no guest. */
function requireGuestId(guestId: string): string {
  if (guestId === "") throw invalidField("guestId", "is required");
  return requireId(guestId, "Guest");
}

/** ListGuestStays pages (docs/staff/guests.md). */
const stayPage = { default: 20, max: 100 } as const;

export interface LineRef {
  /** null: the line of any reservation of the property (the identity scan names the line alone). */
  reservationId: string | null;
  reservationRoomId: string;
}

/** What a scan read, as guest fields: names, nationality, birth date and the document. */
export type ScannedPerson = Pick<
  GuestFields,
  | "givenName"
  | "familyName"
  | "nationality"
  | "birthDate"
  | "documentType"
  | "documentNumber"
  | "documentCountry"
  | "documentExpiry"
>;

/** Guests on room lines: link, unlink, a guest's stays, the guests of reservation lines, a scan saved to a line. */
export function createGuestStays(deps: {
  transact: Transact;
  db: Queryable;
  clock: Clock;
  codec: GuestCodec;
  vault: GuestVault;
  /** Reports a guest put on a line already checked in (guest reporting), in the link's transaction. */
  reportLinked: (tx: Tx, reservationRoomId: string, guestId: string) => Promise<void>;
}) {
  const { transact, db, clock, codec, vault } = deps;

  /** The line, locked; 404 like a missing one for another property's. */
  const lineOf = async (tx: Tx, scope: GuestScope, line: LineRef): Promise<RoomLineRef> => {
    if (line.reservationId === "") throw invalidField("reservationId", "is required");
    if (line.reservationRoomId === "") throw invalidField("reservationRoomId", "is required");
    if (line.reservationId !== null) requireId(line.reservationId, "Reservation");
    requireId(line.reservationRoomId, "Room line");
    const ref = await findRoomLineRef(tx, scope.propertyId, line.reservationId, line.reservationRoomId);
    if (ref === undefined)
      throw new AppError(
        "not_found",
        line.reservationId === null ? "Room line not found." : "Reservation room line not found.",
      );
    return ref;
  };

  /** The line's guests in link order, masked. */
  const guestsOnLine = async (q: Queryable, scope: GuestScope, lineId: string): Promise<Guest[]> => {
    const ids = (await guestIdsOfLines(q, [lineId])).map((l) => l.guestId);
    const rows = new Map((await findGuestsByIds(q, scope.groupId, ids)).map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const row = rows.get(id);
      return row === undefined ? [] : [codec.guestOf(row, false)];
    });
  };

  /** Links guest `guestId` (of the scope's group, checked) to the locked line; false when it was there. */
  const linkInTx = async (tx: Tx, scope: GuestScope, ref: RoomLineRef, guestId: string): Promise<boolean> => {
    if (ref.status === "CANCELLED") throw new AppError("conflict", "A cancelled reservation takes no guests.");
    const current = await guestIdsOfLines(tx, [ref.reservationRoomId]);
    if (current.some((c) => c.guestId === guestId)) return false;
    if (current.length >= ref.occupants)
      throw invalidField(
        "guestId",
        `the room line holds ${ref.occupants} guests (adults and children)`,
        "validation_failed",
      );
    await insertStay(tx, {
      guestId,
      reservationRoomId: ref.reservationRoomId,
      propertyId: scope.propertyId,
      reservationId: ref.reservationId,
      groupId: scope.groupId,
      linkedAt: clock.now(),
    });
    recordChange(tx, {
      propertyId: scope.propertyId,
      entity: "guest",
      entityId: guestId,
      action: "link_stay",
      after: { reservationId: ref.reservationId, reservationRoomId: ref.reservationRoomId },
    });
    await deps.reportLinked(tx, ref.reservationRoomId, guestId);
    return true;
  };

  const stayOut = (s: StayRow) => ({ ...s, createdAt: s.linkedAt, id: s.reservationRoomId });

  return {
    /** Links a guest of the group to a room line of the scope's property (AddRoomLineGuest). */
    async addToLine(scope: GuestScope, line: LineRef, guestId: string): Promise<{ guests: Guest[]; added: boolean }> {
      return transact(async (tx) => {
        const ref = await lineOf(tx, scope, line);
        const id = requireGuestId(guestId);
        // locked: a merge deleting the guest meanwhile makes this a 404, not a broken reference
        const row = await findGuest(tx, scope.groupId, id, true);
        if (row === undefined) throw new AppError("not_found", "Guest not found.");
        refuseErased(row);
        const added = await linkInTx(tx, scope, ref, id);
        return { guests: await guestsOnLine(tx, scope, ref.reservationRoomId), added };
      });
    },

    /** Unlinks a guest from a room line (RemoveRoomLineGuest); 404 when the guest is not on it. */
    async removeFromLine(scope: GuestScope, line: LineRef, guestId: string): Promise<Guest[]> {
      return transact(async (tx) => {
        const ref = await lineOf(tx, scope, line);
        const id = requireGuestId(guestId);
        if (
          (await findGuest(tx, scope.groupId, id)) === undefined ||
          !(await deleteStay(tx, ref.reservationRoomId, id))
        )
          throw new AppError("not_found", "Guest not found on this room line.");
        recordChange(tx, {
          propertyId: scope.propertyId,
          entity: "guest",
          entityId: id,
          action: "unlink_stay",
          before: { reservationId: ref.reservationId, reservationRoomId: ref.reservationRoomId },
        });
        return guestsOnLine(tx, scope, ref.reservationRoomId);
      });
    },

    /** A guest's stays at the group's properties, the latest link first (ListGuestStays). */
    async stays(
      scope: GuestScope,
      guestId: string,
      input: { cursor: string; limit: number },
    ): Promise<{ stays: StayRow[]; nextCursor: string }> {
      const page = pageOf(input, stayPage);
      const id = requireGuestId(guestId);
      if ((await findGuest(db, scope.groupId, id)) === undefined) throw new AppError("not_found", "Guest not found.");
      const rows = await staysOfGuest(db, scope.groupId, id, page.after, page.limit + 1);
      const { items, nextCursor } = pageResult(rows.map(stayOut), page.limit);
      return { stays: items.map(({ createdAt: _, id: __, ...stay }) => stay), nextCursor };
    },

    /**
     * The guests of the scope's room lines, by line, in link order: masked, or in full with `reveal` (each guest so
     * read is written to the audit trail, as GetGuest does).
     */
    async guestsOfLines(scope: GuestScope, lineIds: readonly string[], reveal: boolean): Promise<Map<string, Guest[]>> {
      const read = async (q: Queryable, tx?: Tx) => {
        const links = await guestIdsOfLines(q, lineIds);
        const rows = new Map(
          (await findGuestsByIds(q, scope.groupId, [...new Set(links.map((l) => l.guestId))])).map((r) => [r.id, r]),
        );
        const out = new Map<string, Guest[]>();
        for (const l of links) {
          const row = rows.get(l.guestId);
          if (row === undefined) continue;
          out.set(l.reservationRoomId, [...(out.get(l.reservationRoomId) ?? []), codec.guestOf(row, reveal)]);
        }
        if (tx !== undefined)
          for (const id of rows.keys())
            recordChange(tx, {
              propertyId: scope.propertyId,
              entity: "guest",
              entityId: id,
              action: "read_sensitive",
              after: { fieldsRead: [...sensitiveFields] },
            });
        return out;
      };
      if (lineIds.length === 0) return new Map();
      return reveal ? transact((tx) => read(tx, tx)) : read(db);
    },

    /**
     * Saves a scanned person as a guest of the line: the group's profile with the document number takes the read
     * fields, else a new one is created; then it is linked to the line. One transaction.
     */
    async saveScanned(
      scope: GuestScope,
      lineId: string,
      person: ScannedPerson,
    ): Promise<{ guest: Guest; created: boolean }> {
      return transact(async (tx) => {
        const ref = await lineOf(tx, scope, { reservationId: null, reservationRoomId: lineId });
        const number = normaliseDocumentNumber(person.documentNumber);
        const [existing] = await guestsByDocumentHash(tx, scope.groupId, vault.hashes(number), {
          limit: 1,
          after: undefined,
        });
        let guestId: string;
        if (existing === undefined) {
          const fields: GuestFields = { ...emptyGuestFields, ...person };
          validateGuest(fields, codec.today());
          const row = codec.rowOf(
            { id: newId(), groupId: scope.groupId, createdPropertyId: scope.propertyId, createdAt: clock.now() },
            fields,
          );
          await insertGuest(tx, row);
          recordChange(tx, {
            propertyId: scope.propertyId,
            entity: "guest",
            entityId: row.id,
            action: "create",
            after: fields,
          });
          guestId = row.id;
        } else {
          const locked = (await findGuest(tx, scope.groupId, existing.id, true))!;
          const old = codec.fieldsOf(locked);
          // the MRZ spells names without accents: a profile whose names read the same keeps its own spelling
          const sameName =
            nameWords(`${old.givenName} ${old.familyName}`).join(" ") ===
            nameWords(`${person.givenName} ${person.familyName}`).join(" ");
          const next: GuestFields = {
            ...old,
            ...person,
            ...(sameName ? { givenName: old.givenName, familyName: old.familyName } : {}),
          };
          validateGuest(next, codec.today());
          await updateGuestRow(tx, codec.rowOf(locked, next));
          recordChange(tx, {
            propertyId: scope.propertyId,
            entity: "guest",
            entityId: locked.id,
            action: "modify",
            before: old,
            after: next,
          });
          guestId = locked.id;
        }
        await linkInTx(tx, scope, ref, guestId);
        const row = (await findGuest(tx, scope.groupId, guestId))!;
        return { guest: codec.guestOf(row, false), created: existing === undefined };
      });
    },
  };
}
