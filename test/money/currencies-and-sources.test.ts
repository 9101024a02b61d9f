import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { restCall, restFields, rpcClient, rpcFailure, rpcFaces } from "./faces.ts";

// Currencies are ISO 4217 codes with their own minor unit; staff book without the CHANNEL source, and mobile
// errors name the mobile body's fields.

let app: TestApp;
let admin: string;
let manager: string;
let dbl: { id: string };
let bar: { id: string };

beforeAll(async () => {
  app = await startTestApp();
  admin = (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken;
  const hotel = await createTestProperty(app, { code: "SRC-1", businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(hotel.id, { number: "101", roomTypeId: dbl.id });
  bar = await inventory.createRatePlan(hotel.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-03-31",
    amountMinor: 25000n,
  });
  manager = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const property = (code: string, currency: string, amountScale?: number) => ({
  groupCode: "CUR",
  code,
  name: `Hotel ${code}`,
  timeZone: "Europe/Istanbul",
  currency,
  ...(amountScale !== undefined ? { amountScale } : {}),
});

describe("currencies: ISO 4217 only, each with its own minor unit", () => {
  it("REST", async () => {
    const post = (body: object) => restCall(app.baseUrl, "POST", "/api/admin/v1/properties", admin, body);
    const abc = await post(property("CUR-R0", "ABC"));
    expect([abc.status, abc.body.error?.code, restFields(abc.body)]).toEqual([400, "invalid_argument", ["currency"]]);
    for (const [code, currency, scale] of [
      ["CUR-R1", "JPY", 1],
      ["CUR-R2", "KWD", 1000],
      ["CUR-R3", "TRY", 100],
    ] as const) {
      const res = await post(property(code, currency));
      expect(res.status).toBe(200);
      expect(res.body.property).toMatchObject({ currency, amountScale: scale });
    }
    const wrongScale = await post(property("CUR-R4", "JPY", 100));
    expect([wrongScale.status, restFields(wrongScale.body)]).toEqual([422, ["amountScale"]]);
  });

  it.each(rpcFaces)("%s", async (face) => {
    const client = rpcClient(app.baseUrl, face, AdminService, admin);
    const f = face.toUpperCase().slice(0, 1);
    expect(await rpcFailure(client.createProperty(property(`CUR-${f}0`, "ABC")))).toMatchObject({
      code: "invalid_argument",
      fields: ["currency"],
    });
    expect((await client.createProperty(property(`CUR-${f}1`, "JPY"))).property).toMatchObject({ amountScale: 1 });
    expect((await client.createProperty(property(`CUR-${f}2`, "KWD"))).property).toMatchObject({ amountScale: 1000 });
    expect((await client.createProperty(property(`CUR-${f}3`, "TRY"))).property).toMatchObject({ amountScale: 100 });
    expect(await rpcFailure(client.createProperty(property(`CUR-${f}4`, "KWD", 100)))).toMatchObject({
      code: "validation_failed",
      fields: ["amountScale"],
    });
  });
});

const mobileStay = (over: Record<string, unknown> = {}) => ({
  holderName: "Mobile Guest",
  arrivalDate: "2027-03-10",
  departureDate: "2027-03-12",
  roomTypeId: dbl.id,
  ratePlanId: bar.id,
  adults: 2,
  totalMinor: 50000,
  currency: "TRY",
  ...over,
});

describe("staff bookings: no CHANNEL source; errors in the mobile body's terms", () => {
  it("REST", async () => {
    const post = (body: object) => restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, body);
    const channel = await post(mobileStay({ source: "CHANNEL" }));
    expect([channel.status, channel.body.error?.code, restFields(channel.body)]).toEqual([
      422,
      "validation_failed",
      ["source"],
    ]);
    const crowded = await post(mobileStay({ adults: 3 }));
    expect([crowded.status, restFields(crowded.body)]).toEqual([422, ["adults"]]);
    expect(crowded.body.error.message).not.toContain("rooms[");
    const options = await restCall(app.baseUrl, "GET", "/api/mobile/v1/reservations/options", manager);
    expect(options.body.sources).toEqual(["DIRECT", "MOBILE", "PANEL", "API"]);
    const { rows } = await app.db.pool.query("select 1 from reservations where holder_name = 'Mobile Guest'");
    expect(rows).toEqual([]);
  });

  it.each(rpcFaces)("%s", async (face) => {
    const mobile = rpcClient(app.baseUrl, face, MobileService, manager);
    const stay = { ...mobileStay(), totalMinor: 50000n };
    expect(await rpcFailure(mobile.createMobileReservation({ ...stay, source: "CHANNEL" }))).toMatchObject({
      code: "validation_failed",
      fields: ["source"],
    });
    const crowded = await rpcFailure(mobile.createMobileReservation({ ...stay, adults: 3 }));
    expect(crowded).toMatchObject({ code: "validation_failed", fields: ["adults"] });
    expect(crowded.message).not.toContain("rooms[");
    // the staff face of ReservationService holds the same rule
    const reservations = rpcClient(app.baseUrl, face, ReservationService, manager);
    expect(
      await rpcFailure(
        reservations.createReservation({
          holderName: "Staff Guest",
          arrivalDate: "2027-03-10",
          departureDate: "2027-03-12",
          source: ReservationSource.CHANNEL,
          channel: "Booking.com",
          externalReference: `BK-${face}`,
          rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2 }],
        }),
      ),
    ).toMatchObject({ code: "validation_failed", fields: ["source"] });
  });
});
