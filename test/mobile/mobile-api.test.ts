import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { newId } from "../../src/lib/ids.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let other: { id: string; code: string };
const tokens: Record<string, string> = {};
let dbl: { id: string };
let sgl: { id: string };
let bar: { id: string };
let room101: { id: string };
let otherReservationId: string;

const base = "/api/mobile/v1";

async function call(
  method: string,
  path: string,
  opts: { token?: string | undefined; body?: unknown; key?: string } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) Object.assign(headers, bearer(opts.token));
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.key !== undefined) headers["idempotency-key"] = opts.key;
  const res = await fetch(`${app.baseUrl}${base}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
}

const create = (body: Json, token = tokens.manager, key = newId()) =>
  call("POST", "/reservations", { token, body, key });
const stay = (over: Json = {}): Json => ({
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

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "MOB-1", businessDate: "2027-03-01" });
  other = await createTestProperty(app, { code: "MOB-2", businessDate: "2027-03-01" });
  const inventory = app.services.inventory;
  dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  sgl = await inventory.createRoomType(property.id, { code: "SGL", name: "Single", maxOccupancy: 1 });
  room101 = await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "102", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "201", roomTypeId: sgl.id });
  bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "BED_AND_BREAKFAST",
    roomTypeIds: [dbl.id, sgl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-04-30",
    amountMinor: 25000n,
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: sgl.id,
    from: "2027-03-01",
    to: "2027-03-11",
    amountMinor: 15000n,
  });
  // another property with a reservation of its own
  const oDbl = await inventory.createRoomType(other.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(other.id, { number: "101", roomTypeId: oDbl.id });
  const oBar = await inventory.createRatePlan(other.id, {
    code: "BAR",
    name: "BAR",
    boardType: "ROOM_ONLY",
    roomTypeIds: [oDbl.id],
  });
  await inventory.setPrices(other.id, {
    ratePlanId: oBar.id,
    roomTypeId: oDbl.id,
    from: "2027-03-01",
    to: "2027-03-31",
    amountMinor: 10000n,
  });
  const reservations = app.services.reservations;
  const { reservation } = await reservations.create(
    { propertyId: other.id, canOverridePrice: false },
    {
      source: "DIRECT",
      channel: null,
      externalReference: null,
      holderName: "Other",
      arrivalDate: "2027-03-01",
      departureDate: "2027-03-02",
      rooms: [{ roomTypeId: oDbl.id, ratePlanId: oBar.id, adults: 1 }],
    },
  );
  otherReservationId = reservation.id;
  for (const role of ["manager", "front_desk", "accountant", "viewer"])
    tokens[role] = (await createStaffSession(app, { propertyCode: property.code, role })).accessToken;
  tokens.otherManager = (await createStaffSession(app, { propertyCode: other.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("GET /reservations/options", () => {
  it("lists the active property's options, no-store", async () => {
    const res = await call("GET", "/reservations/options", { token: tokens.front_desk });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.body).toMatchObject({ currency: "TRY", amountScale: 100, quotes: [] });
    expect(res.body.roomTypes.map((r: Json) => r.code).sort()).toEqual(["DBL", "SGL"]);
    expect(res.body.roomTypes.find((r: Json) => r.code === "DBL")).toEqual({
      id: dbl.id,
      code: "DBL",
      name: "Double",
      maxOccupancy: 2,
    });
    expect(res.body.ratePlans).toEqual([
      {
        id: bar.id,
        code: "BAR",
        name: "Best available",
        boardType: "BED_AND_BREAKFAST",
        roomTypeIds: [dbl.id, sgl.id].sort(),
        // no policy set: cancelling is free
        cancellationPolicy: null,
        // nor a deposit rule
        depositPolicy: null,
      },
    ]);
    expect(res.body.rooms).toHaveLength(3);
    expect(res.body.rooms.find((r: Json) => r.number === "101")).toEqual({
      id: room101.id,
      number: "101",
      roomTypeId: dbl.id,
      status: "CLEAN",
    });
    expect(res.body.boardTypes).toContain("ALL_INCLUSIVE");
    expect(res.body.sources).toContain("MOBILE");
  });

  it("quotes each priced rate plan x room type for a stay", async () => {
    const res = await call("GET", "/reservations/options?arrivalDate=2027-03-10&departureDate=2027-03-12&adults=2", {
      token: tokens.viewer,
    });
    expect(res.status).toBe(200);
    // SGL has prices only until 2027-03-11 (exclusive): not quoted
    expect(res.body.quotes).toEqual([
      { roomTypeId: dbl.id, ratePlanId: bar.id, totalMinor: 50000, available: true, deposit: null },
    ]);
    const single = await call("GET", "/reservations/options?arrivalDate=2027-03-09&departureDate=2027-03-10&adults=2", {
      token: tokens.viewer,
    });
    expect(single.body.quotes.find((q: Json) => q.roomTypeId === sgl.id)).toEqual({
      roomTypeId: sgl.id,
      ratePlanId: bar.id,
      totalMinor: 15000,
      available: false,
      deposit: null,
    });
  });

  it("refuses bad dates, no token", async () => {
    expect((await call("GET", "/reservations/options?arrivalDate=2027-03-10", { token: tokens.viewer })).status).toBe(
      400,
    );
    expect(
      (
        await call("GET", "/reservations/options?arrivalDate=2027-03-12&departureDate=2027-03-10", {
          token: tokens.viewer,
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call("GET", "/reservations/options?arrivalDate=2027-02-30&departureDate=2027-03-10", {
          token: tokens.viewer,
        })
      ).status,
    ).toBe(400);
    const anon = await call("GET", "/reservations/options");
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe("unauthorized");
  });
});

describe("POST /reservations", () => {
  it("creates a MOBILE reservation (201), replays the same key, and needs a key", async () => {
    const key = newId();
    const first = await create(
      stay({ roomId: room101.id, boardType: "BED_AND_BREAKFAST", notes: "late arrival" }),
      tokens.front_desk,
      key,
    );
    expect(first.status).toBe(201);
    expect(first.headers.get("cache-control")).toContain("no-store");
    expect(first.body).toMatchObject({
      status: "GUARANTEED",
      source: "MOBILE",
      holderName: "Mobile Guest",
      totalMinor: 50000,
      currency: "TRY",
      notes: "late arrival",
    });
    expect(first.body.rooms[0]).toMatchObject({
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      roomId: room101.id,
      roomNumber: "101",
      nightlyMinor: [25000, 25000],
    });
    const again = await create(
      stay({ roomId: room101.id, boardType: "BED_AND_BREAKFAST", notes: "late arrival" }),
      tokens.front_desk,
      key,
    );
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const count = await app.db.pool.query(
      "select count(*)::int as n from reservations where property_id = $1 and holder_name = 'Mobile Guest'",
      [property.id],
    );
    expect(count.rows[0].n).toBe(1);
    const noKey = await call("POST", "/reservations", { token: tokens.front_desk, body: stay() });
    expect(noKey.status).toBe(400);
  });

  it("takes a valid source and TENTATIVE status; a property id in the body grants nothing", async () => {
    // the codec refuses unknown fields: a property id in the body is a 400, never another property
    expect((await create(stay({ propertyId: other.id }))).status).toBe(400);
    const res = await create(stay({ source: "DIRECT", status: "TENTATIVE", adults: 1 }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ source: "DIRECT", status: "TENTATIVE" });
    const row = await app.db.pool.query("select property_id from reservations where id = $1", [res.body.id]);
    expect(row.rows[0].property_id).toBe(property.id);
  });

  it("validates input: 400 for malformed, 422 for rule failures", async () => {
    const bad = async (over: Json) => (await create(stay(over))).status;
    expect(await bad({ holderName: "" })).toBe(400);
    expect(await bad({ arrivalDate: "10.03.2027" })).toBe(400);
    expect(await bad({ departureDate: "2027-03-09" })).toBe(400);
    expect(await bad({ totalMinor: undefined })).toBe(400);
    expect(await bad({ currency: "" })).toBe(400);
    expect(await bad({ adults: 0 })).toBe(400);
    expect(await bad({ source: "FAX" })).toBe(400);
    expect(await bad({ status: "IN_HOUSE" })).toBe(400);
    expect(await bad({ boardType: "NONE" })).toBe(400);
    expect(await bad({ boardType: "ROOM_ONLY" })).toBe(422);
    expect(await bad({ currency: "EUR" })).toBe(422);
    expect(await bad({ adults: 3 })).toBe(422);
    expect(await bad({ arrivalDate: "2027-02-20", departureDate: "2027-02-22" })).toBe(422);
    expect(
      await bad({
        roomId: (await call("GET", "/reservations/options", { token: tokens.manager })).body.rooms.find(
          (r: Json) => r.number === "201",
        ).id,
      }),
    ).toBe(422);
    // no price on 2027-03-11 for SGL
    expect(await bad({ roomTypeId: sgl.id, adults: 1, totalMinor: 30000 })).toBe(422);
    expect(await bad({ roomTypeId: newId() })).toBe(404);
  });

  it("checks the price against the rate plan", async () => {
    const res = await create(stay({ totalMinor: 40000 }), tokens.front_desk);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_failed");
  });

  it("refuses a sold-out room type", async () => {
    // two DBL rooms: one sold above (2027-03-10..12) plus the tentative one; a third is sold out
    const res = await create(stay({ adults: 1 }));
    expect(res.status).toBe(409);
  });

  it("403 without reservations.create, 401 without a session", async () => {
    const res = await create(stay({ arrivalDate: "2027-04-01", departureDate: "2027-04-02" }), tokens.viewer);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect((await call("POST", "/reservations", { body: stay(), key: newId() })).status).toBe(401);
  });
});

describe("GET /reservations and /reservations/{id}", () => {
  it("lists and reads the active property's reservations only", async () => {
    const list = await call("GET", "/reservations?from=2027-03-10&to=2027-03-10&status=GUARANTEED,TENTATIVE", {
      token: tokens.viewer,
    });
    expect(list.status).toBe(200);
    expect(list.body.reservations).toHaveLength(2);
    expect(list.body.hasMore).toBe(false);
    const id = list.body.reservations[0].id;
    const one = await call("GET", `/reservations/${id}`, { token: tokens.viewer });
    expect(one.status).toBe(200);
    expect(one.body.reservation.id).toBe(id);
    expect(one.body.reservation.rooms).toHaveLength(1);
    expect(one.body.folioBalanceMinor).toBeNull();
    const none = await call("GET", "/reservations?from=2027-03-11", { token: tokens.viewer });
    expect(none.body.reservations).toHaveLength(0);
  });

  it("404 for another property's reservation, 400 for a bad filter", async () => {
    const res = await call("GET", `/reservations/${otherReservationId}`, { token: tokens.manager });
    expect(res.status).toBe(404);
    expect((await call("GET", "/reservations/not-an-id", { token: tokens.manager })).status).toBe(404);
    expect((await call("GET", `/reservations/${otherReservationId}`, { token: tokens.otherManager })).status).toBe(200);
    expect((await call("GET", "/reservations?status=LOST", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/reservations?from=2027-13-01", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/reservations")).status).toBe(401);
  });
});

describe("GET /dashboard", () => {
  it("counts today at the active property", async () => {
    const res = await call("GET", "/dashboard", { token: tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      businessDate: "2027-03-01",
      arrivals: 0,
      departures: 0,
      inHouse: 0,
      roomsTotal: 3,
      roomsAvailable: 3,
      roomsOutOfOrder: 0,
      roomsSold: 0,
      occupancyBp: 0,
      revenueMinor: 0,
      currency: "TRY",
      amountScale: 100,
      overdueDeposits: [],
      overdueDepositCount: 0,
      unreportedGuests: 0,
      failedGuestReports: 0,
    });
    const o = await call("GET", "/dashboard", { token: tokens.otherManager });
    expect(o.body).toMatchObject({ arrivals: 1, roomsTotal: 1, roomsSold: 1, roomsAvailable: 0, occupancyBp: 10000 });
    expect((await call("GET", "/dashboard")).status).toBe(401);
  });
});

describe("GET /forecast", () => {
  it("per day sold, occupancy, ADR and revenue; includeOptions adds TENTATIVE", async () => {
    const res = await call("GET", "/forecast?year=2027&month=3", { token: tokens.accountant });
    expect(res.status).toBe(200);
    expect(res.body.days).toHaveLength(31);
    expect(res.body.days[9]).toEqual({
      date: "2027-03-10",
      roomsAvailable: 3,
      roomsSold: 1,
      occupancyBp: 3333,
      adrMinor: 25000,
      revenueMinor: 25000,
    });
    expect(res.body.days[11]).toMatchObject({ date: "2027-03-12", roomsSold: 0, adrMinor: 0 });
    const opts = await call("GET", "/forecast?year=2027&month=3&includeOptions=true", { token: tokens.accountant });
    expect(opts.body.days[9]).toMatchObject({ roomsSold: 2, occupancyBp: 6666, revenueMinor: 50000, adrMinor: 25000 });
    expect((await call("GET", "/forecast?year=2027&month=12", { token: tokens.manager })).body.days.at(-1).date).toBe(
      "2027-12-31",
    );
  });

  it("400 for an invalid month or year, 403 without reports.read", async () => {
    expect((await call("GET", "/forecast?year=2027&month=13", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/forecast?year=1990&month=1", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/forecast?month=1", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/forecast?year=abc&month=1", { token: tokens.manager })).status).toBe(400);
    expect((await call("GET", "/forecast?year=2027&month=3", { token: tokens.front_desk })).status).toBe(403);
  });
});

describe("night audit", () => {
  it("GET shows checks; canRun only with night_audit.run", async () => {
    const viewer = await call("GET", "/night-audit", { token: tokens.viewer });
    expect(viewer.status).toBe(200);
    expect(viewer.body).toMatchObject({ businessDate: "2027-03-01", canRun: false });
    expect(viewer.body.checks.length).toBeGreaterThan(0);
    expect(viewer.body.checks[0]).toEqual({
      id: expect.any(String),
      status: expect.stringMatching(/^(ok|warning|blocking)$/),
      message: expect.any(String),
      count: expect.any(Number),
    });
    const manager = await call("GET", "/night-audit", { token: tokens.manager });
    expect(manager.body.canRun).toBe(true);
  });

  it("POST runs once; a moved date is 409; 403 without night_audit.run; 400 for a bad date", async () => {
    expect(
      (await call("POST", "/night-audit", { token: tokens.front_desk, body: { expectedBusinessDate: "2027-03-01" } }))
        .status,
    ).toBe(403);
    expect(
      (await call("POST", "/night-audit", { token: tokens.manager, body: { expectedBusinessDate: "1.3.2027" } }))
        .status,
    ).toBe(400);
    const run = await call("POST", "/night-audit", {
      token: tokens.manager,
      body: { expectedBusinessDate: "2027-03-01" },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      previousBusinessDate: "2027-03-01",
      businessDate: "2027-03-02",
      summary: { currency: "TRY", amountScale: 100 },
    });
    const again = await call("POST", "/night-audit", {
      token: tokens.manager,
      body: { expectedBusinessDate: "2027-03-01" },
    });
    expect(again.status).toBe(409);
    expect((await call("GET", "/dashboard", { token: tokens.viewer })).body.businessDate).toBe("2027-03-02");
    // the other property's day did not move
    expect((await call("GET", "/dashboard", { token: tokens.otherManager })).body.businessDate).toBe("2027-03-01");
  });
});
