import type { Deps, Module } from "../module.ts";
import type { InventoryService } from "./inventory.service.ts";
import { inventoryRpcServices, registerInventoryRpc } from "./inventory.rpc.ts";

export { createInventoryService, requireRoomType, type InventoryService } from "./inventory.service.ts";
export {
  takeRooms,
  takeRoomsOfStays,
  takeRoomsOverbooking,
  releaseRooms,
  lockRoomDays,
  readAvailability,
  availabilityHead,
  type ShortNight,
  type RoomDays,
} from "./inventory-days.ts";
export { findInventoryDrift, repairInventoryDrift, type InventoryDrift } from "./verify.ts";
export {
  findRoom,
  findRatePlan,
  findRoomType,
  nightlyPrices,
  quoteStay,
  updateRoomStatus,
  outOfOrderBetween,
  boardTypes,
} from "./inventory.repository.ts";
export type { RoomType, Room, RatePlan, StayPolicy, RatePlanDeposit } from "./inventory.repository.ts";
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
export { maxAriWriteChanges, type AriWrite } from "./ari-write.ts";

export function createInventoryModule(deps: Deps, service: InventoryService): Module {
  return {
    name: "inventory",
    services: inventoryRpcServices,
    registerRpc: (router) => registerInventoryRpc(router, service, deps.db.pool),
  };
}
