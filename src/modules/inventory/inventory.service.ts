import type pg from "pg";
import type { Transact } from "../../db/transaction.ts";
import type { Queryable } from "../../db/queryable.ts";
import type { Clock } from "../../lib/clock.ts";
import { createAriService, type AriService } from "./ari.service.ts";
import { createCatalogueService, type CatalogueService } from "./catalogue.service.ts";
import type { StayInRoom } from "./out-of-order.ts";
import { createRoomStatusService, type RoomStatusService } from "./room-status.service.ts";

export interface InventoryDeps {
  transact: Transact;
  pool: pg.Pool;
  clock: Clock;
  /** Which reservation holds a room on some nights (the reservations module answers; app.ts wires it). */
  stayInRoom: StayInRoom;
  /** Where an ARI read that may lag (`AriInput.mayLag`) is read: the replica within its bound, else the primary. */
  replicaReads?: Queryable;
}

/** The inventory of a property: its catalogue, its rooms' status and its ARI (prices, restrictions, availability). */
export type InventoryService = CatalogueService & RoomStatusService & AriService;

export function createInventoryService(deps: InventoryDeps): InventoryService {
  return {
    ...createCatalogueService(deps),
    ...createRoomStatusService(deps),
    ...createAriService(deps),
  };
}
