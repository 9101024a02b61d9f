import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
const clock = new ManualClock("2027-05-01T09:00:00.000Z");
const tokens: Record<string, string> = {};
let property: { id: string };
let managerUserId: string;
let double: { roomTypeId: string; ratePlanId: string };

async function call(
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = token === undefined ? {} : bearer(token);
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key !== undefined) headers["idempotency-key"] = key;
  const res = await fetch(`${app.baseUrl}/api/mobile/v1${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
}

const run = (reportId: string, start: string, end: string, token = tokens.manager) =>
  call("POST", "/reports", token, { reportId, start, end });

beforeAll(async () => {
  app = await startTestApp({ clock });
  property = await createTestProperty(app, { code: "REP-1", businessDate: "2027-05-01" });
  const other = await createTestProperty(app, { code: "REP-2", businessDate: "2027-05-01" });
  const inventory = app.services.inventory;
  const reservations = app.services.reservations;
  const folios = app.services.folios;
  const actor = { propertyId: property.id, canOverridePrice: false };

  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const room101 = await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "102", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "103", roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "BAR",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-05-01",
    to: "2027-06-30",
    amountMinor: 25000n,
  });
  double = { roomTypeId: dbl.id, ratePlanId: bar.id };
  const book = async (holderName: string, arrivalDate: string, departureDate: string) =>
    (
      await reservations.create(actor, {
        source: "DIRECT",
        channel: null,
        externalReference: null,
        holderName,
        arrivalDate,
        departureDate,
        rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2 }],
      })
    ).reservation;

  const ada = await book("Ada Stay", "2027-05-01", "2027-05-03");
  await book("Bo Later", "2027-05-02", "2027-05-04");
  const cy = await book("Cy Cancel", "2027-05-05", "2027-05-06");
  await reservations.cancel(actor, cy.id);
  await reservations.checkIn(actor, ada.id, ada.rooms[0]!.id, room101.id);
  const { id: folioId } = await folios.getFolio(property.id, { reservationId: ada.id });
  await folios.postCharge(property.id, "user:test", {
    folioId,
    code: "MINIBAR",
    description: "Minibar",
    amountMinor: 1500n,
  });
  await folios.postPayment(property.id, "user:test", { folioId, amountMinor: 10000n, methodCode: "CASH" });
  const card = await folios.postPayment(property.id, "user:test", { folioId, amountMinor: 5000n, methodCode: "VISA" });
  await folios.reversePayment(property.id, "user:test", { paymentId: card.id });

  // the other property has a guest arriving the same day
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
    from: "2027-05-01",
    to: "2027-05-31",
    amountMinor: 10000n,
  });
  await reservations.create(
    { propertyId: other.id, canOverridePrice: false },
    {
      source: "DIRECT",
      channel: null,
      externalReference: null,
      holderName: "Other Guest",
      arrivalDate: "2027-05-01",
      departureDate: "2027-05-02",
      rooms: [{ roomTypeId: oDbl.id, ratePlanId: oBar.id, adults: 1 }],
    },
  );

  const manager = await createStaffSession(app, { propertyCode: "REP-1", role: "manager" });
  managerUserId = manager.userId;
  tokens.manager = manager.accessToken;
  tokens.accountant = (await createStaffSession(app, { propertyCode: "REP-1", role: "accountant" })).accessToken;
  tokens.frontDesk = (await createStaffSession(app, { propertyCode: "REP-1", role: "front_desk" })).accessToken;
  tokens.otherManager = (await createStaffSession(app, { propertyCode: "REP-2", role: "manager" })).accessToken;
  // the night of 2027-05-01 is posted to Ada's folio
  const audit = await call("POST", "/night-audit", tokens.manager, { expectedBusinessDate: "2027-05-01" });
  expect(audit.status).toBe(200);
});
afterAll(async () => {
  await app?.close();
});

describe("GET /reports", () => {
  it("lists the catalogue with columns, no-store; needs reports.read", async () => {
    const res = await call("GET", "/reports", tokens.accountant);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.body.reports.map((r: Json) => r.reportId)).toEqual([
      "arrivals",
      "departures",
      "in_house",
      "occupancy_by_day",
      "revenue_by_day",
      "payments_by_method",
      "cancellations",
    ]);
    const arrivals = res.body.reports[0];
    expect(arrivals.name).toBe("Arrivals");
    expect(arrivals.columns[0]).toEqual({
      key: "arrivalDate",
      label: "Arrival",
      type: "date",
      currency: null,
      amountScale: null,
    });
    expect((await call("GET", "/reports", tokens.frontDesk)).status).toBe(403);
    expect((await call("GET", "/reports")).status).toBe(401);
  });
});

describe("POST /reports", () => {
  it("arrivals of the active property only, rows in column order, money in minor units", async () => {
    const res = await run("arrivals", "2027-05-01", "2027-05-31");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.body).toMatchObject({
      ok: true,
      name: "Arrivals",
      rowCount: 2,
      truncated: false,
      runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(res.body.columns.find((c: Json) => c.key === "totalMinor")).toEqual({
      key: "totalMinor",
      label: "Total",
      type: "money",
      currency: "TRY",
      amountScale: 100,
    });
    expect(res.body.rows).toEqual([
      ["2027-05-01", expect.any(String), "Ada Stay", "IN_HOUSE", 1, 2, 0, "2027-05-03", 50000],
      ["2027-05-02", expect.any(String), "Bo Later", "GUARANTEED", 1, 2, 0, "2027-05-04", 50000],
    ]);
    const other = await run("arrivals", "2027-05-01", "2027-05-31", tokens.otherManager);
    expect(other.body.rows.map((r: Json[]) => r[2])).toEqual(["Other Guest"]);
  });

  it("departures, in-house with rooms, cancellations by the property's day", async () => {
    expect(
      (await run("departures", "2027-05-03", "2027-05-03")).body.rows.map((r: Json[]) => [r[0], r[2], r[3]]),
    ).toEqual([["2027-05-03", "Ada Stay", "IN_HOUSE"]]);
    const inHouse = await run("in_house", "2027-05-01", "2027-05-01");
    expect(inHouse.body.rows).toEqual([
      [expect.any(String), "Ada Stay", "101", "2027-05-01", "2027-05-03", "IN_HOUSE", 2, 0],
    ]);
    expect((await run("in_house", "2027-05-04", "2027-05-10")).body.rowCount).toBe(0);
    const cancelled = await run("cancellations", "2027-05-01", "2027-05-01");
    expect(cancelled.body.rows).toEqual([
      ["2027-05-01", expect.any(String), "Cy Cancel", "DIRECT", "", "2027-05-05", "2027-05-06", 25000],
    ]);
  });

  it("occupancy, revenue and payments by day or method", async () => {
    const occupancy = await run("occupancy_by_day", "2027-05-01", "2027-05-03");
    expect(occupancy.body.rows).toEqual([
      ["2027-05-01", 3, 1, 3333, 25000, 25000],
      ["2027-05-02", 3, 2, 6666, 25000, 50000],
      ["2027-05-03", 3, 1, 3333, 25000, 25000],
    ]);
    const revenue = await run("revenue_by_day", "2027-04-30", "2027-05-02");
    expect(revenue.body.rows).toEqual([
      ["2027-04-30", 0, 0, 0],
      ["2027-05-01", 25000, 1500, 26500],
      ["2027-05-02", 0, 0, 0],
    ]);
    const payments = await run("payments_by_method", "2027-05-01", "2027-05-01");
    expect(payments.body.rows).toEqual([
      ["CASH", "CASH", 1, 0, 10000],
      ["VISA", "CARD", 1, 1, 0],
    ]);
  });

  it("counts a moved stay on its new nights, each at its own price", async () => {
    const actor = { propertyId: property.id, canOverridePrice: false };
    await app.services.inventory.setPrices(property.id, {
      ...double,
      from: "2027-06-21",
      to: "2027-06-22",
      amountMinor: 30000n,
    });
    const { reservation } = await app.services.reservations.create(actor, {
      source: "DIRECT",
      channel: null,
      externalReference: null,
      holderName: "Di Moved",
      arrivalDate: "2027-06-10",
      departureDate: "2027-06-12",
      rooms: [{ ...double, adults: 2 }],
    });
    await app.services.reservations.update(actor, reservation.id, {
      arrivalDate: "2027-06-20",
      departureDate: "2027-06-23",
    });
    const nights = async (start: string, end: string) =>
      (await run("occupancy_by_day", start, end)).body.rows.map((r: Json[]) => [r[0], r[2], r[5]]);
    expect(await nights("2027-06-10", "2027-06-11")).toEqual([
      ["2027-06-10", 0, 0],
      ["2027-06-11", 0, 0],
    ]);
    expect(await nights("2027-06-19", "2027-06-23")).toEqual([
      ["2027-06-19", 0, 0],
      ["2027-06-20", 1, 25000],
      ["2027-06-21", 1, 30000],
      ["2027-06-22", 1, 25000],
      ["2027-06-23", 0, 0],
    ]);
    // the same statement answers on every face
    for (const transport of [
      createGrpcTransport({ baseUrl: app.baseUrl }),
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    ]) {
      const client = createClient(MobileService, transport);
      const moved = await client.runReport(
        { reportId: "occupancy_by_day", start: "2027-06-20", end: "2027-06-22" },
        { headers: bearer(tokens.manager!) },
      );
      expect(moved.rows.map((r) => toJson(ListValueSchema, r) as Json[]).map((r) => [r[0], r[2], r[5]])).toEqual([
        ["2027-06-20", 1, 25000],
        ["2027-06-21", 1, 30000],
        ["2027-06-22", 1, 25000],
      ]);
    }
    await app.services.reservations.cancel(actor, reservation.id);
    expect(await nights("2027-06-20", "2027-06-20")).toEqual([["2027-06-20", 0, 0]]);
  });

  it("is the same RPC over gRPC (rows as google.protobuf.ListValue)", async () => {
    const client = createClient(MobileService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const run = await client.runReport(
      { reportId: "payments_by_method", start: "2027-05-01", end: "2027-05-01" },
      { headers: bearer(tokens.manager!) },
    );
    expect(run).toMatchObject({ ok: true, name: "Payments by method", rowCount: 2, truncated: false });
    expect(run.rows.map((r) => toJson(ListValueSchema, r))).toEqual([
      ["CASH", "CASH", 1, 0, 10000],
      ["VISA", "CARD", 1, 1, 0],
    ]);
    await expect(
      client.runReport(
        { reportId: "arrivals", start: "2027-05-01", end: "2027-05-02" },
        { headers: bearer(tokens.frontDesk!) },
      ),
    ).rejects.toMatchObject({ code: Code.PermissionDenied });
  });

  it("previews at most 60 rows and says so; 366 days at most", async () => {
    const long = await run("revenue_by_day", "2027-05-01", "2027-08-08");
    expect(long.body).toMatchObject({ rowCount: 100, truncated: true });
    expect(long.body.rows).toHaveLength(60);
    expect(long.body.rows.at(-1)[0]).toBe("2027-06-29");
    const year = await run("occupancy_by_day", "2027-05-01", "2028-04-30");
    expect(year.body).toMatchObject({ rowCount: 366, truncated: true });
    const tooLong = await run("occupancy_by_day", "2027-05-01", "2028-05-01");
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: "invalid_argument", requestId: expect.any(String) });
  });

  it("records every run with who ran it, and never stores the rows for an Idempotency-Key", async () => {
    const key = newId();
    const res = await call(
      "POST",
      "/reports",
      tokens.manager,
      { reportId: "arrivals", start: "2027-05-01", end: "2027-05-02" },
      key,
    );
    expect(res.status).toBe(200);
    const { rows } = await app.db.pool.query(
      "select property_id, report_id, to_char(start_date, 'YYYY-MM-DD') as start, to_char(end_date, 'YYYY-MM-DD') as end, user_id, row_count, truncated from report_runs where id = $1",
      [res.body.runId],
    );
    expect(rows).toEqual([
      {
        property_id: property.id,
        report_id: "arrivals",
        start: "2027-05-01",
        end: "2027-05-02",
        user_id: managerUserId,
        row_count: 2,
        truncated: false,
      },
    ]);
    const stored = await app.db.pool.query("select count(*)::int as n from idempotency_keys where key = $1", [key]);
    expect(stored.rows[0].n).toBe(0);
    // a second run is a new run
    const again = await call(
      "POST",
      "/reports",
      tokens.manager,
      { reportId: "arrivals", start: "2027-05-01", end: "2027-05-02" },
      key,
    );
    expect(again.body.runId).not.toBe(res.body.runId);
  });

  it("400 for an unknown report or bad dates, 403 without reports.read, 401 without a session", async () => {
    for (const body of [
      { reportId: "guests_by_shoe_size", start: "2027-05-01", end: "2027-05-02" },
      { reportId: "arrivals", start: "2027-05-02", end: "2027-05-01" },
      { reportId: "arrivals", start: "2027-02-30", end: "2027-03-01" },
      { reportId: "arrivals", start: "01.05.2027", end: "2027-05-02" },
      { reportId: "arrivals", start: "2027-05-01" },
      { reportId: 7, start: "2027-05-01", end: "2027-05-02" },
    ]) {
      const res = await call("POST", "/reports", tokens.manager, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_argument");
    }
    expect((await run("arrivals", "2027-05-01", "2027-05-02", tokens.frontDesk)).status).toBe(403);
    expect(
      (await call("POST", "/reports", undefined, { reportId: "arrivals", start: "2027-05-01", end: "2027-05-02" }))
        .status,
    ).toBe(401);
  });
});
