import type { Tx } from "../../db/transaction.ts";
import { newId } from "../../lib/ids.ts";
import { addDays } from "../../lib/dates.ts";
import { changeRoomCount } from "./inventory-days.ts";
import * as repo from "./inventory.repository.ts";
import { upsertPrices } from "./prices.repository.ts";
import { propertyById } from "../properties/index.ts";

const demoRoomTypes = [
  { code: "SGL", name: "Single Room", maxOccupancy: 1, rooms: 6, floor: 1, price: 180_000n },
  { code: "DBL", name: "Double Room", maxOccupancy: 2, rooms: 12, floor: 2, price: 250_000n },
  { code: "TWN", name: "Twin Room", maxOccupancy: 2, rooms: 8, floor: 3, price: 260_000n },
  { code: "STE", name: "Suite", maxOccupancy: 4, rooms: 4, floor: 4, price: 600_000n },
] as const;

/** Breakfast adds this much per night (minor units, scale 100: 400.00). */
const breakfastSupplement = 40_000n;
const priceDays = 400;

/**
 * Demo inventory for one property, on the caller's transaction: 4 room types, 30 rooms, rate plans RO (room
 * only) and BB (bed and breakfast) for every type, and prices for the next 400 days from the business date.
 */
export async function seedInventory(tx: Tx, propertyId: string): Promise<void> {
  const now = new Date();
  const property = await propertyById(tx, propertyId);
  const until = addDays(property.businessDate, priceDays);
  const types: { id: string; price: bigint }[] = [];
  for (const t of demoRoomTypes) {
    const rt = await repo.insertRoomType(
      tx,
      propertyId,
      { id: newId(), code: t.code, name: t.name, maxOccupancy: t.maxOccupancy },
      now,
    );
    types.push({ id: rt.id, price: t.price });
    for (let i = 1; i <= t.rooms; i++) {
      await repo.insertRoom(
        tx,
        propertyId,
        { id: newId(), number: `${t.floor}${String(i).padStart(2, "0")}`, roomTypeId: rt.id, status: "CLEAN" },
        now,
      );
    }
    await changeRoomCount(tx, propertyId, rt.id, t.rooms, property.businessDate);
  }
  const roomTypeIds = types.map((t) => t.id);
  const plans = [
    { code: "RO", name: "Room Only", boardType: "ROOM_ONLY", supplement: 0n },
    { code: "BB", name: "Bed & Breakfast", boardType: "BED_AND_BREAKFAST", supplement: breakfastSupplement },
  ] as const;
  for (const p of plans) {
    const id = newId();
    await repo.insertRatePlan(
      tx,
      propertyId,
      { id, code: p.code, name: p.name, boardType: p.boardType, roomTypeIds, pricesByOccupancy: false },
      now,
    );
    for (const t of types)
      await upsertPrices(tx, propertyId, id, t.id, property.businessDate, until, t.price + p.supplement);
  }
}
