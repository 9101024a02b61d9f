import type pg from "pg";
import { AppError, type FieldViolation } from "../../errors.ts";
import { holds, type Principal, type PropertyRef } from "../auth/index.ts";
import { maxAriWriteChanges, type AriWrite, type InventoryService } from "../inventory/index.ts";
import { mappingsOf, ratePlansOf, roomTypesOf } from "./reads.repository.ts";
import type { Keyed } from "../../db/held-transaction.ts";

type Caller = Extract<Principal, { kind: "partner" | "internal" }>;

/** One change as the partner sends it: codes are the provider's (ours where it has no mapping). */
export interface PartnerAriUpdate extends Omit<AriWrite, "ratePlanId" | "roomTypeId"> {
  roomTypeCode: string;
  ratePlanCode: string;
}

/**
 * The partner's ARI write: codes resolved through the caller's mappings, then the inventory module's batch write
 * (checked whole, applied in one transaction). Before approval only sandbox properties accept it.
 */
export function createAriWrites(deps: { pool: pg.Pool; inventory: InventoryService }) {
  return {
    async update(
      caller: Caller,
      property: PropertyRef,
      changes: readonly PartnerAriUpdate[],
      keyed?: Keyed,
    ): Promise<{ propertyCode: string; changes: number; cells: number }> {
      if (caller.environment !== "live" && !property.sandbox)
        throw new AppError(
          "partner_not_approved",
          "Live writes need partner approval; until then ARI writes are accepted for the sandbox property only.",
        );
      // Availability caps are allotment, which the hotel delegates on its own (scope allotment.write).
      const capped = changes.flatMap((c, i) => (c.availabilityCap === undefined ? [] : [i]));
      if (capped.length > 0 && !holds(caller, "allotment.write"))
        throw new AppError("forbidden", "Availability caps need the scope allotment.write (the hotel's delegation).", {
          details: capped.slice(0, 100).map((i) => ({
            field: `changes[${i}].availabilityCap`,
            reason: "needs the scope allotment.write",
          })),
        });
      if (changes.length === 0 || changes.length > maxAriWriteChanges)
        throw new AppError("validation_failed", `changes: 1 to ${maxAriWriteChanges} changes.`, {
          details: [{ field: "changes", reason: `1 to ${maxAriWriteChanges} changes` }],
        });
      const [mapped, roomTypes, ratePlans] = await Promise.all([
        mappingsOf(deps.pool, property.id, caller.provider),
        roomTypesOf(deps.pool, property.id),
        ratePlansOf(deps.pool, property.id),
      ]);
      // The provider's code first; our code for an entity the provider has no code for.
      const lookup = (items: { id: string; code: string }[]) => {
        const byCode = new Map<string, string>();
        for (const i of items) if (!mapped.has(i.id)) byCode.set(i.code, i.id);
        for (const i of items) {
          const external = mapped.get(i.id);
          if (external !== undefined) byCode.set(external, i.id);
        }
        return byCode;
      };
      const roomTypeIds = lookup(roomTypes);
      const ratePlanIds = lookup(ratePlans);
      const missing: FieldViolation[] = [];
      const unknown: FieldViolation[] = [];
      const resolved: AriWrite[] = [];
      for (const [i, c] of changes.entries()) {
        const { roomTypeCode, ratePlanCode, ...values } = c;
        const roomTypeId = roomTypeIds.get(roomTypeCode);
        const ratePlanId = ratePlanIds.get(ratePlanCode);
        for (const [field, code, id, what] of [
          ["roomTypeCode", roomTypeCode, roomTypeId, "room type"],
          ["ratePlanCode", ratePlanCode, ratePlanId, "rate plan"],
        ] as const) {
          if (code === "") missing.push({ field: `changes[${i}].${field}`, reason: "is required" });
          else if (id === undefined)
            unknown.push({
              field: `changes[${i}].${field}`,
              reason: `${code} is not a ${what} code of provider ${caller.provider} at ${property.code}`,
            });
        }
        resolved.push({ ...values, roomTypeId: roomTypeId ?? "", ratePlanId: ratePlanId ?? "" });
      }
      if (missing.length > 0)
        throw new AppError("validation_failed", "Every change needs roomTypeCode and ratePlanCode.", {
          details: missing.slice(0, 100),
        });
      if (unknown.length > 0)
        throw new AppError(
          "not_found",
          `${unknown.length} code${unknown.length === 1 ? " was" : "s were"} not found: ${unknown
            .slice(0, 5)
            .map((u) => u.reason)
            .join("; ")}${unknown.length > 5 ? "; ..." : ""}.`,
          { details: unknown.slice(0, 100) },
        );
      const cells = await deps.inventory.writeAri(property.id, resolved, keyed);
      return { propertyCode: property.code, changes: changes.length, cells };
    },
  };
}

export type AriWrites = ReturnType<typeof createAriWrites>;
