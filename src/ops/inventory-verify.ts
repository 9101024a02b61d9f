import { AppError } from "../errors.ts";
import type { Deps } from "../modules/module.ts";
import { findInventoryDrift, repairInventoryDrift, type InventoryDrift } from "../modules/inventory/index.ts";
import { findPropertyByCode } from "../modules/properties/index.ts";
import { heldNightsSql } from "../modules/reservations/index.ts";

export interface InventoryCheck {
  propertyCode: string;
  businessDate: string;
  repaired: boolean;
  drift: InventoryDrift[];
}

/**
 * `inventory:verify`: the property's day rows against its stays, blocks and out-of-order periods (the inventory
 * invariant, see the inventory module's verify.ts). With `repair` the drift is fixed in one transaction, recorded
 * in the ARI feed and as availability.changed hints, and logged (one warning per repaired counter).
 */
export async function verifyInventory(
  deps: Pick<Deps, "db" | "transact" | "clock" | "logger">,
  propertyCode: string,
  repair: boolean,
): Promise<InventoryCheck> {
  const property = await findPropertyByCode(deps.db, propertyCode);
  if (property === undefined) throw new AppError("not_found", `Property ${propertyCode} not found.`);
  const held = heldNightsSql("$1");
  const drift = repair
    ? await deps.transact((tx) => repairInventoryDrift(tx, property.id, property.businessDate, held, deps.clock.now()))
    : await findInventoryDrift(deps.db, property.id, property.businessDate, held);
  if (repair)
    for (const d of drift)
      deps.logger.warn({ propertyCode, ...d, repairedTo: d.expected }, "inventory:verify repaired a counter");
  return { propertyCode, businessDate: property.businessDate, repaired: repair && drift.length > 0, drift };
}
