import type { App } from "../../src/app.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createInventoryService, type InventoryService } from "../../src/modules/inventory/index.ts";
import {
  createReservationService,
  type Actor,
  type ReservationService,
  stayInRoom,
} from "../../src/modules/reservations/index.ts";
import { createTestProperty } from "../helpers/auth.ts";

export interface Hotel {
  propertyId: string;
  code: string;
  actor: Actor;
  roomTypeId: string;
  roomTypeCode: string;
  ratePlanId: string;
  roomIds: string[];
}

export function services(
  app: Pick<App, "deps">,
  clock = new ManualClock("2026-11-22T09:00:00.000Z"),
): { inventory: InventoryService; reservations: ReservationService; clock: ManualClock } {
  const deps = { transact: app.deps.transact, pool: app.deps.db.pool, clock };
  return {
    inventory: createInventoryService({ ...deps, stayInRoom }),
    reservations: createReservationService(deps),
    clock,
  };
}

/** A property (business date 2026-11-22) with one room type of `rooms` rooms and a rate plan priced 1000.00 a night. */
export async function createHotel(
  app: Pick<App, "deps" | "services">,
  inventory: InventoryService,
  opts: { rooms?: number; maxOccupancy?: number; price?: bigint } = {},
): Promise<Hotel> {
  const p = await createTestProperty(app, { businessDate: "2026-11-22" });
  const rt = await inventory.createRoomType(p.id, {
    code: "DBL",
    name: "Double",
    maxOccupancy: opts.maxOccupancy ?? 2,
  });
  const roomIds: string[] = [];
  for (let i = 1; i <= (opts.rooms ?? 3); i++)
    roomIds.push((await inventory.createRoom(p.id, { number: `10${i}`, roomTypeId: rt.id })).id);
  const rp = await inventory.createRatePlan(p.id, {
    code: "RO",
    name: "Room only",
    boardType: "ROOM_ONLY",
    roomTypeIds: [rt.id],
  });
  await inventory.setPrices(p.id, {
    ratePlanId: rp.id,
    roomTypeId: rt.id,
    from: "2026-11-01",
    to: "2027-06-01",
    amountMinor: opts.price ?? 100_000n,
  });
  return {
    propertyId: p.id,
    code: p.code,
    actor: { propertyId: p.id, canOverridePrice: false },
    roomTypeId: rt.id,
    roomTypeCode: rt.code,
    ratePlanId: rp.id,
    roomIds,
  };
}

export function booking(
  h: Hotel,
  over: Partial<{
    arrivalDate: string;
    departureDate: string;
    adults: number;
    children: number;
    externalReference: string | null;
    channel: string | null;
    amountMinor: bigint;
  }> = {},
) {
  return {
    source: "DIRECT" as const,
    channel: over.channel ?? null,
    externalReference: over.externalReference ?? null,
    holderName: "Ayşe Yılmaz",
    arrivalDate: over.arrivalDate ?? "2026-11-25",
    departureDate: over.departureDate ?? "2026-11-27",
    rooms: [
      {
        roomTypeId: h.roomTypeId,
        ratePlanId: h.ratePlanId,
        adults: over.adults ?? 2,
        children: over.children ?? 0,
        amountMinor: over.amountMinor,
      },
    ],
  };
}
