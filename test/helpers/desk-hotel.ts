// The hotel the panel's desk browser tests start from: the panel built, a screenshot folder, a test app, and a
// property on business date 2027-03-01 with doubles 101 and 102 (DBL), suite 201 (STE), rate plan BAR (both types,
// 250.00 and 400.00 a night) and NRF (doubles only, 200.00) priced through April; and a booking made the way the
// mobile app makes one.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPanel } from "../../panel/build.ts";
import { newId } from "../../src/lib/ids.ts";
import { startTestApp, type TestApp } from "./app.ts";
import { bearer, createTestProperty } from "./auth.ts";

export async function startDeskHotel(name: string) {
  await buildPanel();
  const shotsDir =
    process.env.PANEL_SCREENSHOTS_DIR ??
    join(tmpdir(), `hotelops-${name}-screens-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(shotsDir, { recursive: true });
  console.log(`${name} screenshots: ${shotsDir}`);
  const app = await startTestApp({
    env: { RATE_LIMIT_STAFF_PER_MINUTE: "100000", RATE_LIMIT_ANON_PER_MINUTE: "100000" },
  });
  const hotel = await createTestProperty(app, { businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const ste = await inventory.createRoomType(hotel.id, { code: "STE", name: "Suite", maxOccupancy: 2 });
  const rooms: Record<string, string> = {};
  for (const n of ["101", "102"])
    rooms[n] = (await inventory.createRoom(hotel.id, { number: n, roomTypeId: dbl.id })).id;
  rooms["201"] = (await inventory.createRoom(hotel.id, { number: "201", roomTypeId: ste.id })).id;
  const plan = (code: string, roomTypeIds: string[]) =>
    inventory.createRatePlan(hotel.id, { code, name: code, boardType: "ROOM_ONLY", roomTypeIds });
  const bar = await plan("BAR", [dbl.id, ste.id]);
  const nrf = await plan("NRF", [dbl.id]);
  const price = (ratePlanId: string, roomTypeId: string, amountMinor: bigint) =>
    inventory.setPrices(hotel.id, { ratePlanId, roomTypeId, from: "2027-03-01", to: "2027-04-30", amountMinor });
  await price(bar.id, dbl.id, 25000n);
  await price(bar.id, ste.id, 40000n);
  await price(nrf.id, dbl.id, 20000n);
  return { app, hotel, shotsDir, dbl, ste, bar, nrf, rooms };
}

/** A booking of one double for two adults, made over the mobile API as the app makes one (201 or it throws). */
export async function mobileBooking(
  app: TestApp,
  accessToken: string,
  stay: {
    holderName: string;
    arrivalDate: string;
    departureDate: string;
    roomTypeId: string;
    ratePlanId: string;
    totalMinor: number;
  },
): Promise<{ id: string; code: string; rooms: { id: string }[] }> {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
    method: "POST",
    headers: { ...bearer(accessToken), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify({ ...stay, adults: 2, currency: "TRY" }),
  });
  if (res.status !== 201) throw new Error(`mobile create: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; code: string; rooms: { id: string }[] };
}
