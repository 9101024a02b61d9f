import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { restCall, restFields, rpcClient, rpcFailure, rpcFaces } from "./faces.ts";

// One money bound (10^13 minor units) on every entry path (the night audit: night-audit-uncharged.test.ts).

const BOUND = 10n ** 13n;
const MAX_SAFE = 2n ** 53n - 1n;

let app: TestApp;
let hotel: { id: string; code: string };
let sandbox: { id: string; code: string };
let dbl: { id: string };
let bar: { id: string };
let manager: string;
let partner: string;

beforeAll(async () => {
  app = await startTestApp();
  hotel = await createTestProperty(app, { code: "BOUND-1", businessDate: "2027-03-01" });
  sandbox = await createTestProperty(app, { code: "BOUND-SBX", businessDate: "2027-03-01", sandbox: true });
  const inventory = app.services.inventory;
  dbl = await inventory.createRoomType(hotel.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (const n of ["101", "102", "103"]) await inventory.createRoom(hotel.id, { number: n, roomTypeId: dbl.id });
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
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  // a legal price per night whose stays add up beyond the bound after ten nights
  await inventory.setPrices(hotel.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-05-01",
    to: "2027-05-31",
    amountMinor: BOUND / 10n,
  });
  manager = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
  partner = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [sandbox.code],
      scopes: ["reservations.write"],
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const mobileStay = (over: Record<string, unknown> = {}) => ({
  holderName: "Bound Guest",
  arrivalDate: "2027-03-10",
  departureDate: "2027-03-12",
  roomTypeId: dbl.id,
  ratePlanId: bar.id,
  adults: 2,
  currency: "TRY",
  ...over,
});

describe("the money bound at entry", () => {
  it("a manager's price override beyond the bound is refused, naming the field (REST, Connect, gRPC)", async () => {
    const rest = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay(),
      totalMinor: Number(MAX_SAFE),
      priceOverride: true,
    });
    expect([rest.status, rest.body.error?.code, restFields(rest.body)]).toEqual([
      400,
      "invalid_argument",
      ["totalMinor"],
    ]);
    for (const face of rpcFaces) {
      const mobile = rpcClient(app.baseUrl, face, MobileService, manager);
      expect(
        await rpcFailure(
          mobile.createMobileReservation({ ...mobileStay(), totalMinor: MAX_SAFE, priceOverride: true }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["totalMinor"] });
      const reservations = rpcClient(app.baseUrl, face, ReservationService, manager);
      const line = { roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2, amountMinor: BOUND + 1n };
      expect(
        await rpcFailure(
          reservations.createReservation({
            holderName: "Bound Guest",
            arrivalDate: "2027-03-10",
            departureDate: "2027-03-12",
            rooms: [line],
            priceOverride: true,
          }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["rooms[0].amountMinor"] });
    }
    const { rows } = await app.db.pool.query("select 1 from reservations where property_id = $1", [hotel.id]);
    expect(rows).toEqual([]);
  });

  it("a stay whose daily prices add up beyond the bound is refused at create, naming totalMinor", async () => {
    const tooLong = { arrivalDate: "2027-05-01", departureDate: "2027-05-12" }; // 11 nights of 10^12
    const rest = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay(tooLong),
      totalMinor: Number((BOUND / 10n) * 11n),
    });
    expect([rest.status, rest.body.error?.code, restFields(rest.body)]).toEqual([
      400,
      "invalid_argument",
      ["totalMinor"],
    ]);
    for (const face of rpcFaces) {
      // no amount given: the listed prices are the price, and they are beyond the bound
      const reservations = rpcClient(app.baseUrl, face, ReservationService, manager);
      expect(
        await rpcFailure(
          reservations.createReservation({
            holderName: "Long Guest",
            ...tooLong,
            rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2 }],
          }),
        ),
      ).toMatchObject({ code: "validation_failed", fields: ["totalMinor"] });
    }
    // a price beyond the bound is refused where it is set
    await expect(
      app.services.inventory.setPrices(hotel.id, {
        ratePlanId: bar.id,
        roomTypeId: dbl.id,
        from: "2027-06-01",
        to: "2027-06-02",
        amountMinor: BOUND + 1n,
      }),
    ).rejects.toMatchObject({ code: "invalid_argument", details: [{ field: "amountMinor" }] });
  });

  it("a partner's amounts beyond the bound are refused at entry (REST, Connect, gRPC)", async () => {
    const event = (ref: string) => ({
      eventType: "NEW",
      externalReference: ref,
      channel: "Booking.com",
      arrivalDate: "2027-03-10",
      departureDate: "2027-03-12",
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 2 * 10 ** 13 }],
      totalMinor: 2 * 10 ** 13,
      currency: "TRY",
      holder: { name: "Partner Guest" },
    });
    const rest = await restCall(
      app.baseUrl,
      "POST",
      `/api/v1/properties/${sandbox.code}/reservation-events`,
      partner,
      event("BOUND-REST"),
    );
    expect(rest.status).toBe(422);
    expect(restFields(rest.body)).toEqual(["rooms[0].amountMinor", "totalMinor"]);
    for (const face of rpcFaces) {
      const connectivity = rpcClient(app.baseUrl, face, ConnectivityService, partner);
      const e = event(`BOUND-${face}`);
      const failure = await rpcFailure(
        connectivity.createReservationEvent({
          ...e,
          propertyCode: sandbox.code,
          rooms: e.rooms.map((r) => ({ ...r, amountMinor: BigInt(r.amountMinor) })),
          totalMinor: BigInt(e.totalMinor),
        }),
      );
      expect(failure).toMatchObject({ code: "validation_failed", fields: ["rooms[0].amountMinor", "totalMinor"] });
    }
  });

  it("a charge that would take a folio's balance beyond the bound is refused (Connect, gRPC)", async () => {
    const created = await restCall(app.baseUrl, "POST", "/api/mobile/v1/reservations", manager, {
      ...mobileStay({ arrivalDate: "2027-04-01", departureDate: "2027-04-02" }),
      totalMinor: 25000,
    });
    expect(created.status).toBe(201);
    for (const face of rpcFaces) {
      const folios = rpcClient(app.baseUrl, face, FolioService, manager);
      const { folio } = await folios.getFolio({ reservationId: created.body.id });
      if (face === "connect")
        await folios.postCharge({ folioId: folio!.id, code: "HALL", description: "Ballroom", amountMinor: BOUND });
      expect(
        await rpcFailure(
          folios.postCharge({ folioId: folio!.id, code: "SPA", description: "Massage", amountMinor: 1n }),
        ),
      ).toMatchObject({ code: "invalid_argument", fields: ["amountMinor"] });
      expect((await folios.getFolio({ folioId: folio!.id })).folio!.balanceMinor).toBe(BOUND);
    }
  });
});
