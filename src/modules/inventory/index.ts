import type { Deps, Module } from "../module.ts";
import type { InventoryService } from "./inventory.service.ts";
import { inventoryRpcServices, registerInventoryRpc } from "./inventory.rpc.ts";

export {
  createInventoryService,
  requireRoomType,
  maxAvailabilityDays,
  type InventoryService,
  type InventoryDeps,
  type SetRoomStatusInput,
} from "./inventory.service.ts";
export {
  takeRooms,
  takeRoomsOfStays,
  takeRoomsOverbooking,
  releaseRooms,
  lockRoomDays,
  readAvailability,
  availabilityHead,
  type AvailabilityHead,
  type DayCounter,
  type ShortNight,
  type RoomDays,
  type AvailabilityDay,
  type RoomTypeAvailability,
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
  roomStatuses,
  boardTypes,
} from "./inventory.repository.ts";
export type {
  RoomType,
  Room,
  RatePlan,
  RoomStatus,
  BoardType,
  StayLineQuote,
  StayPolicy,
  RatePlanPolicy,
  RatePlanDeposit,
  PolicyFeeKind,
  OutOfOrderPeriod,
} from "./inventory.repository.ts";
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
  type RoomTypeRow,
} from "./reads.ts";
export {
  recordAriChanges,
  ariChangesSql,
  ariChangesAfter,
  ariHead,
  ariHeads,
  type AriChange,
  type AriChangeRow,
  type AriReason,
} from "./ari-log.ts";
export {
  stayViolations,
  violationsOf,
  restrictionError,
  type StayViolations,
  type StayLine,
  type RestrictionRow,
  type AriDay,
  type SetRestrictionsInput,
} from "./restrictions.ts";
export type { Ari } from "./inventory.service.ts";
export { maxAriWriteChanges, maxAriWriteCells, maxAriWriteDays, type AriWrite } from "./ari-write.ts";

export function createInventoryModule(deps: Deps, service: InventoryService): Module {
  return {
    name: "inventory",
    services: inventoryRpcServices,
    registerRpc: (router) => registerInventoryRpc(router, service, deps.db.pool),
  };
}
