import type { Deps, Module } from "../module.ts";
import type { InventoryService } from "./inventory.service.ts";
import { inventoryRpcServices, registerInventoryRpc } from "./inventory.rpc.ts";

export { createInventoryService, type InventoryService } from "./inventory.service.ts";
export { requireRoomType } from "./inventory-checks.ts";
export {
  takeRooms,
  takeRoomsOfStays,
  takeRoomsOverbooking,
  releaseRooms,
  lockRoomDays,
  type ShortNight,
  type RoomDays,
} from "./inventory-days.ts";
export { readAvailability, availabilityHead } from "./availability.ts";
export { findInventoryDrift, repairInventoryDrift, type InventoryDrift } from "./verify.ts";
export { findRoom, findRatePlan, findRoomType, updateRoomStatus, boardTypes } from "./inventory.repository.ts";
export type { RoomType, Room, RatePlan, RatePlanDeposit } from "./inventory.repository.ts";
export { nightlyPrices, quoteStay, type StayPolicy } from "./prices.repository.ts";
export { outOfOrderBetween } from "./out-of-order.repository.ts";
export { seedInventory } from "./seed.ts";
export {
  overbookedNightsSql,
  ratePlansSql,
  roomCountsOnDaySql,
  roomsSql,
  roomTypesSql,
  sellableRoomsByDaySql,
} from "./sql.ts";
export {
  countRoomsStatusWrittenBefore,
  findCatalogueId,
  ratePlansOf,
  type PartnerRatePlan,
  roomTypesOf,
  stayPriceTotals,
} from "./reads.ts";
export { ariChangesSql, ariChangesAfter, ariHead, ariHeads, type AriChangeRow, type AriReason } from "./ari-log.ts";
export { stayViolations, violationsOf, restrictionError, type StayViolations, type StayLine } from "./restrictions.ts";
export { maxAriWriteChanges, type AriWrite } from "./ari-write-check.ts";

export function createInventoryModule(deps: Deps, service: InventoryService): Module {
  return {
    name: "inventory",
    services: inventoryRpcServices,
    registerRpc: (router) => registerInventoryRpc(router, service),
  };
}
