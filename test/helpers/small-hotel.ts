import type { App } from "../../src/app.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "./auth.ts";

/**
 * A property with 4 double rooms priced for March 2027, a manager session and helpers for the REST calls the
 * observability and production tests drive (mobile reservation create, panel webhook addresses).
 */
export async function smallHotel(app: Pick<App, "deps" | "services">, baseUrl: string) {
  const property = await createTestProperty(app, { businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (const n of ["101", "102", "103", "104"])
    await inventory.createRoom(property.id, { number: n, roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  const manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { ...bearer(manager.accessToken), "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  return {
    property,
    manager,
    roomTypeId: dbl.id,
    ratePlanId: bar.id,
    stay: (over: Record<string, unknown> = {}) => ({
      holderName: "Ayse Yilmaz",
      arrivalDate: "2027-03-10",
      departureDate: "2027-03-12",
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 2,
      totalMinor: 50000,
      currency: "TRY",
      ...over,
    }),
    /** POST /api/mobile/v1/reservations with a fresh Idempotency-Key unless one is given. */
    createReservation: (body: unknown, headers: Record<string, string> = {}) =>
      post("/api/mobile/v1/reservations", body, { "idempotency-key": newId(), ...headers }),
    async addWebhook(url: string, eventTypes = ["reservation.created"]): Promise<{ id: string; secret: string }> {
      const res = await post("/api/panel/v1/webhook-endpoints", { url, eventTypes, description: "observability test" });
      if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { endpoint: { id: string }; secret: string };
      return { id: body.endpoint.id, secret: body.secret };
    },
  };
}

/**
 * smallHotel with a partner of provider "acme" that books it: its codes X-DBL and X-BAR mapped to DBL and BAR, and an
 * approved client with reservations.write and reservations.read (the production tests' partner messages).
 */
export async function partnerHotel(app: Pick<App, "deps" | "services">, baseUrl: string) {
  const hotel = await smallHotel(app, baseUrl);
  for (const [kind, code, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.deps.db.pool, {
      propertyCode: hotel.property.code,
      provider: "acme",
      kind,
      code,
      externalCode,
    });
  const partner = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [hotel.property.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  return { hotel, partner };
}
