import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oauth from "oauth4webapi";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { BoardType, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { createReservationService, stayInRoom } from "../../src/modules/reservations/index.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAriGrid } from "../helpers/hotel-fixtures.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// ARI: restrictions managed by staff over InventoryService, enforced on every booking path (channel bookings
// accepted and flagged), the partner ARI read and the ARI delta feed.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let other: { id: string; code: string };
let dbl: { id: string };
let sgl: { id: string };
let bar: { id: string };
let nrf: { id: string };
let manager: string;
let frontDesk: string;
let internal: string;
let partner: string;
let grpcInventory: Client<typeof InventoryService>;
let connectInventory: Client<typeof InventoryService>;

const insecure = { [oauth.allowInsecureRequests]: true };
async function oauthToken(c: { clientId: string; clientSecret: string }): Promise<string> {
  const as: oauth.AuthorizationServer = { issuer: app.baseUrl, token_endpoint: `${app.baseUrl}/api/v1/oauth/token` };
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    { client_id: c.clientId },
    oauth.ClientSecretBasic(c.clientSecret),
    new URLSearchParams(),
    insecure,
  );
  return (await oauth.processClientCredentialsResponse(as, { client_id: c.clientId }, res)).access_token;
}

/** An OAuth access token of a new acme partner client (not approved) for one property. */
const partnerToken = async (propertyCode: string, scopes: string[]): Promise<string> =>
  oauthToken(await createTestClient(app, { kind: "partner", provider: "acme", propertyCodes: [propertyCode], scopes }));

const get = async (path: string, token = partner): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: bearer(token) });
  return { status: res.status, body: await res.json() };
};

async function failure(work: Promise<unknown>): Promise<{ code: Code; appCode: string | null; message: string }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError)
      return { code: err.code, appCode: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "ARI-1", businessDate: "2027-01-01" });
  other = await createTestProperty(app, { code: "ARI-2", businessDate: "2027-01-01" });
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  sgl = await inventory.createRoomType(property.id, { code: "SGL", name: "Single", maxOccupancy: 1 });
  for (let i = 0; i < 6; i++) await inventory.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "20", roomTypeId: sgl.id });
  bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, sgl.id],
  });
  nrf = await inventory.createRatePlan(property.id, {
    code: "NRF",
    name: "Non refundable",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2027-12-31",
    amountMinor: 10000n,
  });
  await inventory.setPrices(property.id, {
    ratePlanId: nrf.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2027-02-15",
    amountMinor: 9000n,
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: sgl.id,
    from: "2027-01-01",
    to: "2027-12-31",
    amountMinor: 7000n,
  });
  const oDbl = await inventory.createRoomType(other.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(other.id, { number: "1", roomTypeId: oDbl.id });
  for (const [kind, code, external] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const) {
    await setProviderMapping(app.db.pool, {
      propertyCode: property.code,
      provider: "acme",
      kind,
      code,
      externalCode: external,
    });
  }
  manager = (await createStaffSession(app, { propertyCode: property.code, role: "manager" })).accessToken;
  frontDesk = (await createStaffSession(app, { propertyCode: property.code, role: "front_desk" })).accessToken;
  internal = (
    await createTestClient(app, {
      kind: "internal",
      provider: "pms",
      propertyCodes: [property.code],
      scopes: ["admin", "reservations.write", "reservations.read"],
    })
  ).accessToken;
  const p = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["ari.read", "reservations.write", "availability.read"],
    approved: true,
  });
  partner = await oauthToken(p);
  grpcInventory = createClient(InventoryService, createGrpcTransport({ baseUrl: app.baseUrl }));
  connectInventory = createClient(
    InventoryService,
    createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  );

  // Restrictions on BAR x DBL in February, set by the manager in a few calls covering many days.
  const h = { headers: bearer(manager) };
  await connectInventory.setRestrictions(
    {
      propertyCode: property.code,
      ratePlanIds: [bar.id],
      roomTypeIds: [dbl.id],
      from: "2027-02-10",
      to: "2027-02-12",
      stopSell: true,
    },
    h,
  );
  await grpcInventory.setRestrictions(
    {
      propertyCode: property.code,
      ratePlanIds: [bar.id],
      roomTypeIds: [dbl.id],
      from: "2027-02-01",
      to: "2027-03-01",
      weekdays: [5],
      closedToArrival: true,
    },
    h,
  ); // Fridays
  await grpcInventory.setRestrictions(
    {
      propertyCode: property.code,
      ratePlanIds: [bar.id],
      roomTypeIds: [],
      from: "2027-02-20",
      to: "2027-02-23",
      minStay: 3,
      maxStay: 5,
    },
    h,
  ); // DBL and SGL
  await grpcInventory.setRestrictions(
    {
      propertyCode: property.code,
      ratePlanIds: [bar.id],
      roomTypeIds: [dbl.id],
      from: "2027-02-01",
      to: "2027-03-01",
      weekdays: [7],
      closedToDeparture: true,
    },
    h,
  ); // Sundays
});
afterAll(async () => {
  await app?.close();
});

describe("restrictions managed by staff over InventoryService", () => {
  it("writes many days in one call (weekdays, unset fields kept) for rates.manage holders; others get PermissionDenied", async () => {
    // 2027-02 has four Fridays; the min/max call covered 3 days x 2 room types
    const fridays = await grpcInventory.setRestrictions(
      {
        propertyCode: property.code,
        ratePlanIds: [bar.id],
        roomTypeIds: [dbl.id],
        from: "2027-02-01",
        to: "2027-03-01",
        weekdays: [5],
        closedToArrival: true,
      },
      { headers: bearer(manager) },
    );
    expect(fridays.cells).toBe(4);
    const denied = await failure(
      connectInventory.setRestrictions(
        { propertyCode: property.code, ratePlanIds: [bar.id], from: "2027-02-01", to: "2027-02-02", stopSell: true },
        { headers: bearer(frontDesk) },
      ),
    );
    expect(denied.code).toBe(Code.PermissionDenied);
    const bad = await failure(
      grpcInventory.setRestrictions(
        {
          propertyCode: property.code,
          ratePlanIds: [nrf.id],
          roomTypeIds: [sgl.id],
          from: "2027-02-01",
          to: "2027-02-02",
          stopSell: true,
        },
        { headers: bearer(manager) },
      ),
    );
    expect(bad).toMatchObject({ code: Code.InvalidArgument, appCode: "validation_failed" });
    const nothing = await failure(
      grpcInventory.setRestrictions(
        { propertyCode: property.code, ratePlanIds: [bar.id], from: "2027-02-01", to: "2027-02-02" },
        { headers: bearer(manager) },
      ),
    );
    expect(nothing.appCode).toBe("invalid_argument");
    const elsewhere = await failure(
      grpcInventory.setRestrictions(
        { propertyCode: other.code, ratePlanIds: [bar.id], from: "2027-02-01", to: "2027-02-02", stopSell: true },
        { headers: bearer(manager) },
      ),
    );
    expect(elsewhere.code).toBe(Code.NotFound);
    // the Sunday closed-to-departure call kept the Friday closed-to-arrival of the same rows untouched
    const day = (
      await get(`/api/v1/properties/${property.code}/ari?from=2027-02-05&to=2027-02-08&roomTypes=DBL&ratePlans=BAR`)
    ).body.roomTypes[0].ratePlans[0].days;
    expect(day.map((d: Json) => [d.date, d.closedToArrival, d.closedToDeparture])).toEqual([
      ["2027-02-05", true, false],
      ["2027-02-06", false, false],
      ["2027-02-07", false, true],
    ]);
  });
});

describe("staff read ARI over InventoryService", () => {
  it("GetAri shows prices and restrictions by ids (Connect and gRPC); another property is not found", async () => {
    const ari = await connectInventory.getAri(
      {
        propertyCode: property.code,
        from: "2027-02-10",
        to: "2027-02-12",
        roomTypeIds: [dbl.id],
        ratePlanIds: [bar.id],
      },
      { headers: bearer(frontDesk) },
    );
    expect(ari).toMatchObject({ currency: "TRY", amountScale: 100 });
    expect(ari.roomTypes.map((rt) => [rt.code, rt.ratePlans.map((rp) => rp.code)])).toEqual([["DBL", ["BAR"]]]);
    expect(ari.roomTypes[0]!.ratePlans[0]!.days.map((d) => [d.date, d.stopSell, d.priceMinor])).toEqual([
      ["2027-02-10", true, 10000n],
      ["2027-02-11", true, 10000n],
    ]);
    const all = await grpcInventory.getAri(
      { propertyCode: property.code, from: "2027-02-20", to: "2027-02-21" },
      { headers: bearer(manager) },
    );
    expect(
      all.roomTypes.flatMap((rt) => rt.ratePlans.map((rp) => `${rt.code}/${rp.code}:${rp.days[0]!.minStay ?? "-"}`)),
    ).toEqual(["DBL/BAR:3", "DBL/NRF:-", "SGL/BAR:3"]);
    expect(
      (
        await failure(
          grpcInventory.getAri(
            { propertyCode: other.code, from: "2027-02-20", to: "2027-02-21" },
            { headers: bearer(manager) },
          ),
        )
      ).code,
    ).toBe(Code.NotFound);
  });
});

describe("the ARI read decodes every value exactly", () => {
  it("GetAri returns the largest stays, every closure and a price beyond 2^53 minor units as stored", async () => {
    const inventory = createInventoryService({
      transact: app.deps.transact,
      pool: app.db.pool,
      clock: app.clock,
      stayInRoom,
    });
    const range = { ratePlanIds: [nrf.id], roomTypeIds: [dbl.id], weekdays: [] };
    await inventory.setRestrictions(property.id, {
      ...range,
      from: "2027-09-01",
      to: "2027-09-02",
      minStay: 366,
      maxStay: 366,
      closedToArrival: true,
      closedToDeparture: true,
      stopSell: true,
    });
    await inventory.setRestrictions(property.id, { ...range, from: "2027-09-02", to: "2027-09-03", maxStay: 7 });
    // setPrices caps amounts at 10^12; a larger stored one is still read exactly.
    await app.db.pool.query(
      "insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor) values ($1, $2, $3, '2027-09-02', 9007199254740993)",
      [property.id, nrf.id, dbl.id],
    );
    const ari = await grpcInventory.getAri(
      {
        propertyCode: property.code,
        from: "2027-09-01",
        to: "2027-09-04",
        roomTypeIds: [dbl.id],
        ratePlanIds: [nrf.id],
      },
      { headers: bearer(manager) },
    );
    const days = ari.roomTypes[0]!.ratePlans[0]!.days.map((d) => ({
      date: d.date,
      priceMinor: d.priceMinor,
      minStay: d.minStay,
      maxStay: d.maxStay,
      closedToArrival: d.closedToArrival,
      closedToDeparture: d.closedToDeparture,
      stopSell: d.stopSell,
    }));
    const open = { closedToArrival: false, closedToDeparture: false, stopSell: false };
    expect(days).toEqual([
      {
        date: "2027-09-01",
        priceMinor: undefined,
        minStay: 366,
        maxStay: 366,
        closedToArrival: true,
        closedToDeparture: true,
        stopSell: true,
      },
      { date: "2027-09-02", priceMinor: 9007199254740993n, minStay: undefined, maxStay: 7, ...open },
      { date: "2027-09-03", priceMinor: undefined, minStay: undefined, maxStay: undefined, ...open },
    ]);
  });
});

describe("every booking path enforces restrictions with a clear reason", () => {
  const mobileCreate = (body: Json) =>
    fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: { ...bearer(manager), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        holderName: "Guest",
        roomTypeId: dbl.id,
        ratePlanId: bar.id,
        adults: 2,
        currency: "TRY",
        ...body,
      }),
    });

  it("mobile (REST): stop sell is 409 restricted, a too short stay 422, both naming the restriction", async () => {
    const stopped = await mobileCreate({ arrivalDate: "2027-02-09", departureDate: "2027-02-11", totalMinor: 20000 });
    expect(stopped.status).toBe(409);
    const body = (await stopped.json()) as Json;
    expect(body.error.code).toBe("restricted");
    expect(body.error.details[0].reason).toMatch(/^stop_sell: DBL\/BAR is not sold on 2027-02-10$/);
    const short = await mobileCreate({ arrivalDate: "2027-02-21", departureDate: "2027-02-22", totalMinor: 10000 });
    expect(short.status).toBe(422);
    expect(((await short.json()) as Json).error.details[0].reason).toMatch(/^min_stay: .* at least 3 nights/);
    // another rate plan of the same room type is not restricted
    const other = await mobileCreate({
      ratePlanId: nrf.id,
      arrivalDate: "2027-02-09",
      departureDate: "2027-02-11",
      totalMinor: 18000,
    });
    expect(other.status).toBe(201);
  });

  it("gRPC and Connect (internal client, staff): closed to arrival / departure 409, max stay 422; an allowed stay passes; a change into a stop sell is refused", async () => {
    const line = { roomTypeId: dbl.id, ratePlanId: bar.id, adults: 1 };
    const grpc = createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const connect = createClient(
      ReservationService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
    const req = (arrivalDate: string, departureDate: string) => ({
      propertyCode: property.code,
      holderName: "Guest",
      arrivalDate,
      departureDate,
      rooms: [line],
    });
    expect(
      await failure(grpc.createReservation(req("2027-02-05", "2027-02-06"), { headers: bearer(internal) })),
    ).toMatchObject({ code: Code.FailedPrecondition, appCode: "restricted" });
    expect(
      (await failure(connect.createReservation(req("2027-02-06", "2027-02-07"), { headers: bearer(manager) }))).message,
    ).toMatch(/closed_to_departure/);
    expect(
      await failure(grpc.createReservation(req("2027-02-20", "2027-02-27"), { headers: bearer(internal) })),
    ).toMatchObject({ code: Code.InvalidArgument, appCode: "validation_failed" });
    const ok = await connect.createReservation(req("2027-02-20", "2027-02-23"), { headers: bearer(manager) });
    expect(ok.reservation!.restrictionOverrides).toEqual([]);
    const moved = await failure(
      grpc.updateReservation(
        {
          propertyCode: property.code,
          reservationId: ok.reservation!.id,
          arrivalDate: "2027-02-08",
          departureDate: "2027-02-11",
        },
        { headers: bearer(internal) },
      ),
    );
    expect(moved).toMatchObject({ code: Code.FailedPrecondition, appCode: "restricted" });
  });

  it("a channel booking is accepted where a restriction says no, and flagged for staff", async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
      method: "POST",
      headers: { ...bearer(partner), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: "CH-STOP",
        channel: "Booking.com",
        arrivalDate: "2027-02-10",
        departureDate: "2027-02-11",
        currency: "TRY",
        rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 12000 }],
        totalMinor: 12000,
        holder: { name: "Channel Guest" },
      }),
    });
    expect(res.status).toBe(202);
    const { eventId } = (await res.json()) as Json;
    let outcome: Json;
    for (let i = 0; i < 200; i++) {
      outcome = (await get(`/api/v1/properties/${property.code}/reservation-events/${eventId}`)).body;
      if (outcome.status !== "QUEUED") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(outcome.status).toBe("PROCESSED");
    const grpc = createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const { reservation } = await grpc.getReservation(
      { propertyCode: property.code, reservationId: outcome.reservationId },
      { headers: bearer(internal) },
    );
    expect(reservation!.restrictionOverrides).toEqual(["stop_sell: DBL/BAR is not sold on 2027-02-10"]);
    expect(reservation!.rateDifferenceMinor).toBe(2000n);
  });
});

describe("GET /api/v1/properties/{propertyCode}/ari", () => {
  it("returns availability, price with currency and scale, and restrictions per room type x rate plan x day, provider codes beside ours", async () => {
    const { status, body } = await get(`/api/v1/properties/${property.code}/ari?from=2027-02-09&to=2027-02-12`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      propertyCode: "ARI-1",
      from: "2027-02-09",
      to: "2027-02-12",
      toExclusive: true,
      currency: "TRY",
      amountScale: 100,
    });
    expect(
      body.roomTypes.map((rt: Json) => [
        rt.code,
        rt.externalCode,
        rt.ratePlans.map((rp: Json) => [rp.code, rp.externalCode]),
      ]),
    ).toEqual([
      [
        "DBL",
        "X-DBL",
        [
          ["BAR", "X-BAR"],
          ["NRF", null],
        ],
      ],
      ["SGL", null, [["BAR", "X-BAR"]]],
    ]);
    const barDbl = body.roomTypes[0].ratePlans[0].days;
    expect(barDbl[1]).toEqual({
      date: "2027-02-10",
      available: 4,
      priceMinor: 10000,
      minStay: null,
      maxStay: null,
      closedToArrival: false,
      closedToDeparture: false,
      stopSell: true,
      // a rate plan that does not price by occupancy
      occupancyPrices: {},
    });
    expect(barDbl[2]).toMatchObject({ date: "2027-02-11", stopSell: true, available: 6 });
    const nrfDbl = (await get(`/api/v1/properties/${property.code}/ari?from=2027-02-14&to=2027-02-16&ratePlans=NRF`))
      .body.roomTypes[0].ratePlans[0].days;
    expect(nrfDbl.map((d: Json) => d.priceMinor)).toEqual([9000, null]);
  });

  it("filters by our or the provider's codes and rejects bad ranges with 400", async () => {
    const byExternal = (
      await get(`/api/v1/properties/${property.code}/ari?from=2027-02-01&to=2027-02-02&roomTypes=X-DBL&ratePlans=X-BAR`)
    ).body;
    expect(byExternal.roomTypes.map((rt: Json) => [rt.code, rt.ratePlans.map((rp: Json) => rp.code)])).toEqual([
      ["DBL", ["BAR"]],
    ]);
    expect(
      (await get(`/api/v1/properties/${property.code}/ari?from=2027-02-01&to=2027-02-02&roomTypes=NOPE`)).body
        .roomTypes,
    ).toEqual([]);
    expect((await get(`/api/v1/properties/${property.code}/ari?from=2027-01-01&to=2028-01-03`)).status).toBe(400);
    expect((await get(`/api/v1/properties/${property.code}/ari?from=2027-02-02&to=2027-02-01`)).status).toBe(400);
    expect((await get(`/api/v1/properties/${property.code}/ari?from=yesterday&to=2027-02-01`)).status).toBe(400);
  });

  it("answers 404 for a property outside the grant (as for one that does not exist) and 403 without ari.read; capabilities list ari", async () => {
    const outside = await get(`/api/v1/properties/${other.code}/ari?from=2027-02-01&to=2027-02-02`);
    const missing = await get(`/api/v1/properties/NOPE-9/ari?from=2027-02-01&to=2027-02-02`);
    expect(outside.status).toBe(404);
    expect(outside.body.error.message).toBe(missing.body.error.message.replace("NOPE-9", other.code));
    expect((await get(`/api/v1/properties/${other.code}/ari/changes`)).status).toBe(404);
    const noScope = await partnerToken(property.code, ["availability.read"]);
    expect((await get(`/api/v1/properties/${property.code}/ari?from=2027-02-01&to=2027-02-02`, noScope)).status).toBe(
      403,
    );
    expect((await get(`/api/v1/properties/${property.code}/ari/changes`, noScope)).status).toBe(403);
    expect((await get("/api/v1/capabilities")).body.properties[0].capabilities).toContain("ari");
  });

  it("works over gRPC too", async () => {
    const grpc = createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const ari = await grpc.getAri(
      { propertyCode: property.code, from: "2027-02-10", to: "2027-02-11", roomTypes: ["X-DBL"], ratePlans: ["BAR"] },
      { headers: bearer(partner) },
    );
    expect(ari.roomTypes[0]!.ratePlans[0]!.days[0]).toMatchObject({
      date: "2027-02-10",
      stopSell: true,
      priceMinor: 10000n,
    });
    expect(
      await failure(
        grpc.getAri({ propertyCode: other.code, from: "2027-02-10", to: "2027-02-11" }, { headers: bearer(partner) }),
      ),
    ).toMatchObject({ code: Code.NotFound });
  });
});

describe("a large ARI read", () => {
  it("over REST, written part by part as it is built, is the same grid as over Connect and gRPC", async () => {
    // 5 room types x 2 rate plans x 366 days: a part per room type
    const big = await createTestProperty(app, { code: "ARI-3", businessDate: "2027-01-01" });
    const inventory = createInventoryService({
      transact: app.deps.transact,
      pool: app.db.pool,
      clock: app.clock,
      stayInRoom,
    });
    const types = [];
    for (let i = 0; i < 5; i++) {
      const rt = await inventory.createRoomType(big.id, { code: `RT${i}`, name: `Type ${i}`, maxOccupancy: 2 });
      for (let r = 0; r <= i; r++) await inventory.createRoom(big.id, { number: `${i}0${r}`, roomTypeId: rt.id });
      types.push(rt.id);
    }
    for (const [i, code] of ["BAR", "NRF"].entries()) {
      const rp = await inventory.createRatePlan(big.id, {
        code,
        name: code,
        boardType: "ROOM_ONLY",
        roomTypeIds: types,
      });
      for (const [t, rt] of types.entries())
        await inventory.setPrices(big.id, {
          ratePlanId: rp.id,
          roomTypeId: rt,
          from: "2027-01-01",
          to: "2027-06-30",
          amountMinor: BigInt(10000 + 100 * t + i),
        });
      await inventory.setRestrictions(big.id, {
        ratePlanIds: [rp.id],
        roomTypeIds: [types[i]!],
        from: "2027-03-01",
        to: "2027-04-01",
        weekdays: [],
        minStay: 2 + i,
        stopSell: i === 1,
      });
    }
    const token = await partnerToken(big.code, ["ari.read"]);
    const q = { propertyCode: big.code, from: "2027-01-01", to: "2028-01-02" };
    const rest = await get(`/api/v1/properties/${big.code}/ari?from=${q.from}&to=${q.to}`, token);
    expect(rest.status).toBe(200);
    type Day = Record<string, unknown> & { priceMinor?: unknown };
    type Grid = { code: string; ratePlans: { code: string; days: Day[] }[] }[];
    const cells = (roomTypes: Grid) =>
      roomTypes.flatMap((rt) =>
        rt.ratePlans.flatMap((rp) =>
          rp.days.map((d) =>
            [rt.code, rp.code, d.date, d.available, d.priceMinor ?? null, d.minStay ?? null, d.maxStay ?? null]
              .concat([d.closedToArrival, d.closedToDeparture, d.stopSell])
              .map((v) => (typeof v === "bigint" ? Number(v) : v))
              .join(" "),
          ),
        ),
      );
    const expected = cells(rest.body.roomTypes);
    expect(expected).toHaveLength(5 * 2 * 366);
    expect(expected.filter((c) => c.includes(" 10201 ")).length).toBeGreaterThan(150);
    expect(expected.filter((c) => c.endsWith("true"))).toHaveLength(31);
    for (const transport of [
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: app.baseUrl }),
    ]) {
      const answer = await createClient(ConnectivityService, transport).getAri(q, { headers: bearer(token) });
      expect(cells(answer.roomTypes as unknown as Grid)).toEqual(expected);
    }
  });
});

describe("a grid over 100,000 cells", () => {
  it("comes in pages of whole room types in code order, the same over REST, Connect and gRPC; a bad cursor is 400", async () => {
    // 28 room types x 10 rate plans x 366 days = 102,480 cells: 27 room types (98,820 cells), then 1
    const big = await createTestProperty(app, { code: "ARI-4", businessDate: "2027-01-01" });
    const codes = Array.from({ length: 28 }, (_, i) => `RT${String(i).padStart(2, "0")}`);
    // created in reverse: the pages follow the codes, not the order of creation
    const { roomTypes: types } = await seedAriGrid(app, big.id, codes.toReversed(), 10);
    const token = await partnerToken(big.code, ["ari.read"]);
    type Page = { roomTypes: { code: string; ratePlans: { days: { priceMinor?: unknown }[] }[] }[] } & {
      nextCursor: string;
      hasMore: boolean;
    };
    const summary = (p: Page) => ({
      codes: p.roomTypes.map((rt) => rt.code),
      cells: p.roomTypes.reduce((n, rt) => n + rt.ratePlans.reduce((m, rp) => m + rp.days.length, 0), 0),
      total: p.roomTypes
        .flatMap((rt) => rt.ratePlans.flatMap((rp) => rp.days.map((d) => Number(d.priceMinor ?? 0))))
        .reduce((a, b) => a + b, 0),
      hasMore: p.hasMore,
      last: p.nextCursor === "",
    });
    const q = { propertyCode: big.code, from: "2027-01-01", to: "2028-01-02" };
    const path = `/api/v1/properties/${big.code}/ari?from=${q.from}&to=${q.to}`;
    const first = await get(path, token);
    expect(first.status).toBe(200);
    expect(summary(first.body)).toMatchObject({ codes: codes.slice(0, 27), cells: 98_820, hasMore: true, last: false });
    const second = await get(`${path}&cursor=${first.body.nextCursor}`, token);
    expect(summary(second.body)).toMatchObject({ codes: ["RT27"], cells: 3_660, hasMore: false, last: true });
    // what the pages hold is what reading each room type alone holds
    const alone = await get(`${path}&roomTypes=RT00,RT27`, token);
    expect(alone.body.roomTypes).toEqual([first.body.roomTypes[0], second.body.roomTypes[0]]);
    for (const transport of [
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: app.baseUrl }),
    ]) {
      const client = createClient(ConnectivityService, transport);
      const a = await client.getAri(q, { headers: bearer(token) });
      expect(summary(a as unknown as Page)).toEqual(summary(first.body));
      const b = await client.getAri({ ...q, cursor: a.nextCursor }, { headers: bearer(token) });
      expect(summary(b as unknown as Page)).toEqual(summary(second.body));
      expect(await failure(client.getAri({ ...q, cursor: "bm9wZQ" }, { headers: bearer(token) }))).toMatchObject({
        code: Code.InvalidArgument,
        message: expect.stringContaining("cursor"),
      });
    }
    const bad = await get(`${path}&cursor=bm9wZQ`, token);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("cursor");
    // staff's InventoryService.GetAri pages the same way (by ids)
    const staffToken = (await createStaffSession(app, { propertyCode: big.code, role: "manager" })).accessToken;
    const staff = await grpcInventory.getAri(
      { propertyCode: big.code, from: q.from, to: q.to },
      { headers: bearer(staffToken) },
    );
    expect([staff.roomTypes.length, staff.hasMore]).toEqual([27, true]);
    const rest = await grpcInventory.getAri(
      { propertyCode: big.code, from: q.from, to: q.to, cursor: staff.nextCursor },
      { headers: bearer(staffToken) },
    );
    expect([rest.roomTypes.map((rt) => rt.roomTypeId), rest.hasMore, rest.nextCursor]).toEqual([[types[0]], false, ""]);
  }, 60_000); // 102,480 cells written and read four times: seconds on an idle box, more beside other work
});

describe("room types and rate plans of a property", () => {
  /** Whether a property that is full refuses one more, with 409 conflict, over Connect and over gRPC alike. */
  async function refusesOneMore(
    propertyCode: string,
    add: (client: Client<typeof InventoryService>, headers: { authorization: string }) => Promise<unknown>,
    message: string,
  ) {
    const admin = await createTestClient(app, {
      kind: "internal",
      provider: "pms",
      propertyCodes: [propertyCode],
      scopes: ["admin"],
    });
    for (const transport of [
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: app.baseUrl }),
    ])
      expect(await failure(add(createClient(InventoryService, transport), bearer(admin.accessToken)))).toMatchObject({
        code: Code.FailedPrecondition,
        appCode: "conflict",
        message,
      });
  }

  it("rate plans are at most 250 (a room type's year within one ARI page): the 251st is 409 over Connect and gRPC", async () => {
    const small = await createTestProperty(app, { code: "ARI-5", businessDate: "2027-01-01" });
    const inventory = createInventoryService({
      transact: app.deps.transact,
      pool: app.db.pool,
      clock: app.clock,
      stayInRoom,
    });
    const rt = await inventory.createRoomType(small.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
    const plan = (code: string) => ({ code, name: code, boardType: "ROOM_ONLY" as const, roomTypeIds: [rt.id] });
    for (let i = 0; i < 249; i++) await inventory.createRatePlan(small.id, plan(`P${i}`));
    // two at once for the last place: one gets it, the other counts it
    const both = await Promise.allSettled([
      inventory.createRatePlan(small.id, plan("X1")),
      inventory.createRatePlan(small.id, plan("X2")),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    await refusesOneMore(
      small.code,
      (client, headers) =>
        client.createRatePlan(
          { propertyCode: small.code, ...plan("P250"), boardType: BoardType.ROOM_ONLY },
          { headers },
        ),
      "A property has at most 250 rate plans.",
    );
    expect(await inventory.listRatePlans(small.id)).toHaveLength(250);
  }, 60_000); // 250 rate plans created one by one

  it("room types are at most 100 (a year's availability in one answer): the 101st is 409 over Connect and gRPC", async () => {
    const many = await createTestProperty(app, { code: "ARI-6", businessDate: "2027-01-01" });
    const inventory = createInventoryService({
      transact: app.deps.transact,
      pool: app.db.pool,
      clock: app.clock,
      stayInRoom,
    });
    for (let i = 0; i < 100; i++)
      await inventory.createRoomType(many.id, { code: `RT${i}`, name: `Type ${i}`, maxOccupancy: 2 });
    await refusesOneMore(
      many.code,
      (client, headers) =>
        client.createRoomType(
          { propertyCode: many.code, code: "RT100", name: "One more", maxOccupancy: 2 },
          { headers },
        ),
      "A property has at most 100 room types.",
    );
    expect(await inventory.listRoomTypes(many.id)).toHaveLength(100);
  });
});

describe("the ARI delta feed", () => {
  type Page = { data: Json[]; nextCursor: string; hasMore: boolean };
  const page = async (cursor: string, limit = 500, token = partner): Promise<Page> =>
    (
      await get(
        `/api/v1/properties/${property.code}/ari/changes?limit=${limit}${cursor !== "" ? `&cursor=${cursor}` : ""}`,
        token,
      )
    ).body;

  it("lists rate, restriction and availability changes with reasons and provider codes; availability.changed carries the same reasons", async () => {
    const all = await page("");
    const reasons = new Set(all.data.map((c) => c.reason));
    for (const r of ["inventory", "rate", "restriction", "reservation"]) expect(reasons).toContain(r);
    const stop = all.data.find((c) => c.reason === "restriction" && c.from === "2027-02-10");
    expect(stop).toMatchObject({
      to: "2027-02-12",
      toExclusive: true,
      roomTypes: [{ code: "DBL", externalCode: "X-DBL" }],
      ratePlans: [{ code: "BAR", externalCode: "X-BAR" }],
    });
    expect(stop.changedAt).toMatch(/Z$/);
    const hints = await app.db.pool.query<{ reason: string }>(
      "select distinct data ->> 'reason' as reason from domain_events where property_id = $1 and type = 'availability.changed'",
      [property.id],
    );
    expect(hints.rows.map((r) => r.reason).sort()).toEqual(
      expect.arrayContaining(["rate", "reservation", "restriction"]),
    );
    // nothing new: the cursor stays where it is; updatedSince in the future points at the head, not the start
    expect((await page(all.nextCursor)).data).toEqual([]);
    expect((await page(all.nextCursor)).nextCursor).toBe(all.nextCursor);
    const future = (await get(`/api/v1/properties/${property.code}/ari/changes?updatedSince=2099-01-01T00:00:00.000Z`))
      .body;
    expect(future.data).toEqual([]);
    expect(future.nextCursor).toBe(all.nextCursor);
  });

  it("a page walk running during concurrent restriction, price and booking edits misses no change and repeats none", async () => {
    const before = await page("");
    const reservations = createReservationService({ transact: app.deps.transact, pool: app.db.pool, clock: app.clock });
    const inventory = createInventoryService({
      transact: app.deps.transact,
      pool: app.db.pool,
      clock: app.clock,
      stayInRoom,
    });
    const actor = { propertyId: property.id, canOverridePrice: false };
    let writing = true;
    const writers = (async () => {
      for (let round = 0; round < 6; round++) {
        await Promise.all([
          ...Array.from({ length: 4 }, (_, i) =>
            inventory.setRestrictions(property.id, {
              ratePlanIds: [nrf.id],
              roomTypeIds: [dbl.id],
              from: `2027-04-${String(1 + round * 4 + i).padStart(2, "0")}`,
              to: "2027-04-28",
              weekdays: [],
              minStay: 1 + i,
            }),
          ),
          inventory.setPrices(property.id, {
            ratePlanId: bar.id,
            roomTypeId: sgl.id,
            from: "2027-05-01",
            to: "2027-05-10",
            amountMinor: BigInt(7000 + round),
          }),
          reservations.create(actor, {
            source: "API",
            channel: null,
            externalReference: `ARI-C-${round}`,
            holderName: "Guest",
            arrivalDate: "2027-06-01",
            departureDate: "2027-06-02",
            rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 1 }],
          }),
        ]);
      }
      writing = false;
    })();
    const seen: string[] = [];
    let cursor = before.nextCursor;
    for (;;) {
      const stillWriting = writing;
      const p = await page(cursor, 3);
      seen.push(
        ...p.data.map(
          (c) =>
            `${c.reason}|${c.from}|${c.to}|${c.changedAt}|${c.roomTypes.map((x: Json) => x.code).join()}|${c.ratePlans.map((x: Json) => x.code).join()}`,
        ),
      );
      cursor = p.nextCursor;
      if (!p.hasMore && !stillWriting) break;
    }
    await writers;
    const committed = await app.db.pool.query<{
      reason: string;
      from: string;
      to: string;
      changed_at: Date;
      room_types: string[];
      rate_plans: string[];
    }>(
      `select reason, to_char(from_date, 'YYYY-MM-DD') as "from", to_char(to_date, 'YYYY-MM-DD') as "to", changed_at, room_types, rate_plans
         from ari_changes where property_id = $1 and seq > $2 order by seq`,
      [property.id, Buffer.from(before.nextCursor, "base64url").toString().slice(3)],
    );
    const expected = committed.rows.map(
      (c) =>
        `${c.reason}|${c.from}|${c.to}|${c.changed_at.toISOString()}|${c.room_types.join()}|${c.rate_plans.join()}`,
    );
    // 6 rounds x (4 restriction calls + 1 price call + 1 booking), seen in commit order, each exactly once
    expect(expected).toHaveLength(36);
    expect(seen).toEqual(expected);
    expect(seen.filter((s) => s.startsWith("restriction|"))).toHaveLength(24);
    expect(seen.filter((s) => s.startsWith("rate|"))).toHaveLength(6);
    expect(seen.filter((s) => s.startsWith("reservation|"))).toHaveLength(6);
  });
});
