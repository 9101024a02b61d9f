import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient } from "@connectrpc/connect";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { BoardType, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { transportFor, type Face } from "../helpers/policy-hotel.ts";
import { rateAmountNotif, schemaErrors } from "../helpers/ota.ts";

// Occupancy pricing: a rate plan flagged by staff prices a room per number of adults. Partners write the prices
// (POST /api/v1/properties/{propertyCode}/ari, UpdateAri), read them back (GetAri's days, the feed names the
// change), and a booking of 1 adult and one of 2 adults of the same plan pay the configured prices.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let partner: string;
let admin: string;
let manager: { accessToken: string };
let frontDesk: { accessToken: string };
const ids = { dbl: "", trp: "", occ: "", flat: "" };

async function post(body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/ari`, {
    method: "POST",
    headers: { ...bearer(partner), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function read(from: string, to: string): Promise<Json> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/ari?from=${from}&to=${to}`, {
    headers: bearer(partner),
  });
  expect(res.status).toBe(200);
  return res.json();
}

const planOf = (r: Json, rt: string, rp: string): Json =>
  r.roomTypes.find((x: Json) => x.code === rt).ratePlans.find((x: Json) => x.code === rp);

async function failure(work: Promise<unknown>): Promise<{ appCode: string | null; message: string }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { appCode: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  app = await startTestApp({ databaseUrl: await freshDatabaseUrl() });
  property = await createTestProperty(app, { code: "OCC-1", businessDate: "2027-01-01" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const trp = await inv.createRoomType(property.id, { code: "TRP", name: "Triple", maxOccupancy: 3 });
  for (let i = 0; i < 6; i++) await inv.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
  await inv.createRoom(property.id, { number: "30", roomTypeId: trp.id });
  const flat = await inv.createRatePlan(property.id, {
    code: "FLAT",
    name: "Flat",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  const occ = await inv.createRatePlan(property.id, {
    code: "OCC",
    name: "By occupancy",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, trp.id],
    pricesByOccupancy: true,
  });
  Object.assign(ids, { dbl: dbl.id, trp: trp.id, occ: occ.id, flat: flat.id });
  partner = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["ari.read", "ari.write"],
      approved: true,
    })
  ).accessToken;
  admin = (
    await createTestClient(app, {
      kind: "internal",
      provider: "ops",
      propertyCodes: [property.code],
      scopes: ["admin"],
    })
  ).accessToken;
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  frontDesk = await createStaffSession(app, { propertyCode: property.code, role: "front_desk" });
});
afterAll(async () => {
  await app?.close();
});

describe("the occupancy flag (InventoryService.SetRatePlanOccupancyPricing, CreateRatePlan)", () => {
  for (const face of ["connect", "grpc"] as const satisfies Face[]) {
    it(`${face}: a manager turns it on and off, rate plan reads show it, audited; front desk 403; unknown plan 404`, async () => {
      const inv = createClient(InventoryService, transportFor(app, face));
      const opts = { headers: bearer(manager.accessToken) };
      const set = (pricesByOccupancy: boolean) =>
        inv.setRatePlanOccupancyPricing({ propertyCode: property.code, ratePlanId: ids.occ, pricesByOccupancy }, opts);
      expect((await set(false)).ratePlan).toMatchObject({ code: "OCC", pricesByOccupancy: false });
      expect((await set(true)).ratePlan).toMatchObject({ code: "OCC", pricesByOccupancy: true });
      const { ratePlans } = await inv.listRatePlans({ propertyCode: property.code }, opts);
      expect(
        ratePlans.filter((rp) => ["FLAT", "OCC"].includes(rp.code)).map((rp) => [rp.code, rp.pricesByOccupancy]),
      ).toEqual([
        ["FLAT", false],
        ["OCC", true],
      ]);
      const { rows } = await app.db.pool.query(
        "select count(*)::int as n from audit_changes where property_id = $1 and entity_type = 'rate_plan' and action = 'occupancy_pricing'",
        [property.id],
      );
      expect(rows[0].n).toBeGreaterThan(0);
      expect(
        await failure(
          inv.setRatePlanOccupancyPricing(
            { propertyCode: property.code, ratePlanId: ids.occ, pricesByOccupancy: false },
            { headers: bearer(frontDesk.accessToken) },
          ),
        ),
      ).toMatchObject({ appCode: "forbidden" });
      expect(
        await failure(
          inv.setRatePlanOccupancyPricing(
            {
              propertyCode: property.code,
              ratePlanId: "0190a0a0-0000-7000-8000-000000000000",
              pricesByOccupancy: true,
            },
            opts,
          ),
        ),
      ).toMatchObject({ appCode: "not_found" });
      // an internal client creates a plan that prices by occupancy from the start
      const created = await inv.createRatePlan(
        {
          propertyCode: property.code,
          code: `OCC-${face.toUpperCase()}`,
          name: "Created by occupancy",
          boardType: BoardType.ROOM_ONLY,
          roomTypeIds: [ids.dbl],
          pricesByOccupancy: true,
        },
        { headers: bearer(admin) },
      );
      expect(created.ratePlan?.pricesByOccupancy).toBe(true);
    });
  }
});

describe("POST /api/v1/properties/{propertyCode}/ari with occupancyPrices", () => {
  it("writes prices per adults; the ARI read shows them by adults, the feed names the change; a booking pays its adults' price", async () => {
    const res = await post({
      changes: [
        {
          roomTypeCode: "DBL",
          ratePlanCode: "OCC",
          from: "2027-02-01",
          to: "2027-02-04",
          occupancyPrices: [
            { adults: 1, priceMinor: 8000 },
            { adults: 2, priceMinor: 10000 },
          ],
        },
        { roomTypeCode: "TRP", ratePlanCode: "OCC", from: "2027-02-01", to: "2027-02-04", priceMinor: 15000 },
        {
          roomTypeCode: "TRP",
          ratePlanCode: "OCC",
          from: "2027-02-02",
          to: "2027-02-03",
          occupancyPrices: [{ adults: 2, priceMinor: 12000 }],
        },
        { roomTypeCode: "DBL", ratePlanCode: "FLAT", from: "2027-02-01", to: "2027-02-04", priceMinor: 9000 },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const r = await read("2027-02-01", "2027-02-04");
    const dblOcc = planOf(r, "DBL", "OCC");
    expect(dblOcc.pricesByOccupancy).toBe(true);
    expect(dblOcc.days[0]).toMatchObject({
      date: "2027-02-01",
      priceMinor: 10000,
      occupancyPrices: [
        { adults: 1, priceMinor: 8000 },
        { adults: 2, priceMinor: 10000 },
      ],
    });
    // plain priceMinor on an occupancy plan is the price for max occupancy; adults without their own pay it
    const trp = planOf(r, "TRP", "OCC").days;
    expect(trp[0].occupancyPrices).toEqual([{ adults: 3, priceMinor: 15000 }]);
    expect(trp[1].occupancyPrices).toEqual([
      { adults: 2, priceMinor: 12000 },
      { adults: 3, priceMinor: 15000 },
    ]);
    // a flat plan's days carry no occupancy prices
    expect(planOf(r, "DBL", "FLAT").days[0].occupancyPrices).toEqual([]);
    expect(planOf(r, "DBL", "FLAT").pricesByOccupancy).toBe(false);

    const feed = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/ari/changes`, {
      headers: bearer(partner),
    });
    const entries = ((await feed.json()) as Json).data.filter((c: Json) => c.reason === "rate");
    expect(entries.at(-1)).toMatchObject({
      from: "2027-02-01",
      to: "2027-02-04",
      ratePlans: expect.arrayContaining([expect.objectContaining({ code: "OCC" })]),
    });

    // the quote: the same plan and nights differ by the adults' prices
    for (const face of ["connect", "grpc"] as const satisfies Face[]) {
      const rsv = createClient(ReservationService, transportFor(app, face));
      const book = async (adults: number, roomTypeId = ids.dbl) =>
        (
          await rsv.createReservation(
            {
              propertyCode: property.code,
              source: ReservationSource.PANEL,
              holderName: "Ada Yilmaz",
              arrivalDate: "2027-02-01",
              departureDate: "2027-02-03",
              rooms: [{ roomTypeId, ratePlanId: ids.occ, adults, children: 0 }],
            },
            { headers: bearer(manager.accessToken) },
          )
        ).reservation!;
      const one = await book(1);
      const two = await book(2);
      expect(one.rooms[0]!.nightlyMinor).toEqual([8000n, 8000n]);
      expect(two.rooms[0]!.nightlyMinor).toEqual([10000n, 10000n]);
      expect(two.totalMinor - one.totalMinor).toBe(4000n);
      // 2 adults in the triple: their own price on the night that has one, the day's price on the other
      if (face === "connect") expect((await book(2, ids.trp)).rooms[0]!.nightlyMinor).toEqual([15000n, 12000n]);
    }
  });

  it("refuses occupancy prices on a flat plan, adults out of range, repeated adults and priceMinor beside them (422 naming the change); nothing is written", async () => {
    const res = await post({
      changes: [
        { roomTypeCode: "DBL", ratePlanCode: "OCC", from: "2027-05-01", to: "2027-05-02", priceMinor: 1 },
        {
          roomTypeCode: "DBL",
          ratePlanCode: "FLAT",
          from: "2027-05-01",
          to: "2027-05-02",
          occupancyPrices: [{ adults: 1, priceMinor: 5000 }],
        },
        {
          roomTypeCode: "DBL",
          ratePlanCode: "OCC",
          from: "2027-05-01",
          to: "2027-05-02",
          occupancyPrices: [{ adults: 3, priceMinor: 5000 }],
        },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: "changes[1].occupancyPrices", reason: "rate plan FLAT does not price by occupancy" },
      { field: "changes[2].occupancyPrices[0].adults", reason: "1 to 2 (the max occupancy of room type DBL)" },
    ]);
    const bad = await post({
      changes: [
        {
          roomTypeCode: "DBL",
          ratePlanCode: "OCC",
          from: "2027-05-01",
          to: "2027-05-02",
          priceMinor: 100,
          occupancyPrices: [
            { adults: 0, priceMinor: 1 },
            { adults: 1, priceMinor: -1 },
            { adults: 1, priceMinor: 2 },
          ],
        },
      ],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: Json) => d.field)).toEqual([
      "changes[0].occupancyPrices[0].adults",
      "changes[0].occupancyPrices[1].priceMinor",
      "changes[0].occupancyPrices[2].adults",
      "changes[0].priceMinor",
    ]);
    const r = await read("2027-05-01", "2027-05-02");
    expect(planOf(r, "DBL", "OCC").days[0]).toMatchObject({ priceMinor: null, occupancyPrices: [] });
  });
});

describe("UpdateAri and InventoryService.SetPrices over Connect and gRPC", () => {
  for (const face of ["connect", "grpc"] as const satisfies Face[]) {
    it(`${face}: occupancy prices written and read back; bad input 422 naming the field`, async () => {
      const from = face === "connect" ? "2027-06-01" : "2027-07-01";
      const to = face === "connect" ? "2027-06-03" : "2027-07-03";
      const conn = createClient(ConnectivityService, transportFor(app, face));
      const opts = { headers: bearer(partner) };
      const w = await conn.updateAri(
        {
          propertyCode: property.code,
          changes: [
            {
              roomTypeCode: "TRP",
              ratePlanCode: "OCC",
              from,
              to,
              weekdays: [],
              occupancyPrices: [
                { adults: 1, priceMinor: 7000n },
                { adults: 3, priceMinor: 16000n },
              ],
            },
          ],
        },
        opts,
      );
      expect(w.cells).toBe(2);
      const got = await conn.getAri({ propertyCode: property.code, from, to, roomTypes: ["TRP"] }, opts);
      const days = got.roomTypes[0]!.ratePlans.find((p) => p.code === "OCC")!.days;
      expect(days[0]!.priceMinor).toBe(16000n);
      expect(days[0]!.occupancyPrices.map((p) => [p.adults, p.priceMinor])).toEqual([
        [1, 7000n],
        [3, 16000n],
      ]);
      expect(
        await failure(
          conn.updateAri(
            {
              propertyCode: property.code,
              changes: [
                {
                  roomTypeCode: "DBL",
                  ratePlanCode: "FLAT",
                  from,
                  to,
                  weekdays: [],
                  occupancyPrices: [{ adults: 1, priceMinor: 1n }],
                },
              ],
            },
            opts,
          ),
        ),
      ).toMatchObject({ appCode: "validation_failed" });

      // the internal SetPrices takes them too, named as SetPrices names its fields; the staff GetAri shows them
      const inv = createClient(InventoryService, transportFor(app, face));
      const set = await inv.setPrices(
        {
          propertyCode: property.code,
          ratePlanId: ids.occ,
          roomTypeId: ids.dbl,
          from,
          to,
          amountMinor: 0n,
          occupancyPrices: [
            { adults: 1, priceMinor: 6000n },
            { adults: 2, priceMinor: 9500n },
          ],
        },
        { headers: bearer(admin) },
      );
      expect(set.days).toBe(2);
      const staff = await inv.getAri(
        { propertyCode: property.code, from, to, roomTypeIds: [ids.dbl], ratePlanIds: [ids.occ] },
        { headers: bearer(manager.accessToken) },
      );
      expect(staff.roomTypes[0]!.ratePlans[0]!.days[1]!.occupancyPrices.map((p) => [p.adults, p.priceMinor])).toEqual([
        [1, 6000n],
        [2, 9500n],
      ]);
      const refused = await failure(
        inv.setPrices(
          {
            propertyCode: property.code,
            ratePlanId: ids.occ,
            roomTypeId: ids.dbl,
            from,
            to,
            amountMinor: 0n,
            occupancyPrices: [{ adults: 5, priceMinor: 1n }],
          },
          { headers: bearer(admin) },
        ),
      );
      expect(refused).toMatchObject({ appCode: "validation_failed" });
      expect(refused.message).toContain("occupancyPrices[0].adults");
      expect(
        await failure(
          inv.setPrices(
            {
              propertyCode: property.code,
              ratePlanId: ids.flat,
              roomTypeId: ids.dbl,
              from,
              to,
              amountMinor: 0n,
              occupancyPrices: [{ adults: 1, priceMinor: 1n }],
            },
            { headers: bearer(admin) },
          ),
        ),
      ).toMatchObject({ appCode: "validation_failed" });
    });
  }
});

describe("OTA_HotelRateAmountNotifRQ with BaseByGuestAmts per NumberOfGuests", () => {
  async function ota(xml: string): Promise<{ status: number; body: string }> {
    expect(schemaErrors(xml)).toBe("");
    const res = await fetch(`${app.baseUrl}/api/v1/ota/${property.code}/OTA_HotelRateAmountNotifRQ`, {
      method: "POST",
      headers: { ...bearer(partner), "content-type": "application/xml" },
      body: xml,
    });
    const body = await res.text();
    expect(schemaErrors(body)).toBe("");
    return { status: res.status, body };
  }

  it("sets the prices per adults of an occupancy plan; on a flat plan they are refused with Errors", async () => {
    const res = await ota(
      rateAmountNotif("occ-rates-1", [
        {
          roomType: "DBL",
          ratePlan: "OCC",
          start: "2027-08-01",
          end: "2027-08-02",
          amount: "",
          byGuests: [
            { guests: 1, amount: "70.00" },
            { guests: 2, amount: "95.00" },
          ],
        },
        { roomType: "TRP", ratePlan: "OCC", start: "2027-08-01", end: "2027-08-01", amount: "150.00" },
      ]),
    );
    expect(res.status, res.body).toBe(200);
    expect(res.body).toContain("<Success/>");
    const r = await read("2027-08-01", "2027-08-04");
    expect(planOf(r, "DBL", "OCC").days.map((d: Json) => d.occupancyPrices)).toEqual([
      [
        { adults: 1, priceMinor: 7000 },
        { adults: 2, priceMinor: 9500 },
      ],
      [
        { adults: 1, priceMinor: 7000 },
        { adults: 2, priceMinor: 9500 },
      ],
      [],
    ]);
    // one amount is the room's price: on an occupancy plan, the price for max occupancy
    expect(planOf(r, "TRP", "OCC").days[0].occupancyPrices).toEqual([{ adults: 3, priceMinor: 15000 }]);

    const flat = await ota(
      rateAmountNotif("occ-rates-2", [
        {
          roomType: "DBL",
          ratePlan: "FLAT",
          start: "2027-08-01",
          end: "2027-08-01",
          amount: "",
          byGuests: [
            { guests: 1, amount: "70.00" },
            { guests: 2, amount: "95.00" },
          ],
        },
      ]),
    );
    expect(flat.status).toBe(422);
    expect(flat.body).toContain("<Errors>");
    expect(flat.body).toContain("does not price by occupancy");
    expect(planOf(await read("2027-08-01", "2027-08-02"), "DBL", "FLAT").days[0].priceMinor).toBeNull();
  });
});
