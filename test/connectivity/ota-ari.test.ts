import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/ops/seed.ts";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { availNotif, rateAmountNotif, schemaErrors } from "../helpers/ota.ts";

// OTA_HotelAvailNotifRQ and OTA_HotelRateAmountNotifRQ are the partner ARI write (UpdateAri) in OpenTravel: the
// values they set are read back from the ARI read over REST and Connect. Messages and answers are checked against
// the OpenTravel 2015B schemas.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let token: string;
let allotToken: string;

async function post(message: string, xml: string, key?: string, as = token) {
  expect(schemaErrors(xml)).toBe("");
  const res = await fetch(`${app.baseUrl}/api/v1/ota/${property.code}/${message}`, {
    method: "POST",
    headers: { ...bearer(as), "content-type": "application/xml", ...(key ? { "idempotency-key": key } : {}) },
    body: xml,
  });
  const body = await res.text();
  expect(schemaErrors(body)).toBe("");
  return { status: res.status, body, headers: res.headers };
}

async function days(from: string, to: string): Promise<Json[]> {
  const res = await fetch(
    `${app.baseUrl}/api/v1/properties/${property.code}/ari?from=${from}&to=${to}&roomTypes=X-DBL&ratePlans=X-BAR`,
    { headers: bearer(token) },
  );
  const body = (await res.json()) as Json;
  return body.roomTypes[0].ratePlans[0].days;
}

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "OTA-ARI", businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  for (const [kind, code, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: property.code, provider: "acme", kind, code, externalCode });
  token = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["ari.read", "ari.write"],
      approved: true,
    })
  ).accessToken;
  allotToken = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["ari.read", "ari.write", "allotment.write"],
      approved: true,
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("OTA ARI notifications", () => {
  it("OTA_HotelRateAmountNotifRQ sets prices for an inclusive date range (single date and range)", async () => {
    const res = await post(
      "OTA_HotelRateAmountNotifRQ",
      rateAmountNotif("rate-1", [
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-03-01", end: "2027-03-03", amount: "320.00" },
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-03-05", end: "2027-03-05", amount: "410.50" },
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.body).toContain("<OTA_HotelRateAmountNotifRS");
    expect(res.body).toContain("<Success/>");
    const read = await days("2027-03-01", "2027-03-07");
    expect(read.map((d: Json) => d.priceMinor)).toEqual([32000, 32000, 32000, null, 41050, null]);
  });

  it("OTA_HotelAvailNotifRQ sets stop sell, CTA/CTD and min/max stay; Connect's GetAri reads the same", async () => {
    const res = await post(
      "OTA_HotelAvailNotifRQ",
      availNotif("avail-1", [
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-04-01", end: "2027-04-02", minStay: 2, maxStay: 10 },
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-04-03", end: "2027-04-03", stopSell: true },
        {
          roomType: "X-DBL",
          ratePlan: "X-BAR",
          start: "2027-04-04",
          end: "2027-04-04",
          closedToArrival: true,
          closedToDeparture: true,
        },
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.body).toContain("<OTA_HotelAvailNotifRS");
    const read = await days("2027-04-01", "2027-04-05");
    expect(read.map((d: Json) => [d.minStay, d.maxStay, d.stopSell, d.closedToArrival, d.closedToDeparture])).toEqual([
      [2, 10, false, false, false],
      [2, 10, false, false, false],
      [null, null, true, false, false],
      [null, null, false, true, true],
    ]);
    const connect = createClient(
      ConnectivityService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
    const viaConnect = await connect.getAri(
      { propertyCode: property.code, from: "2027-04-03", to: "2027-04-04", roomTypes: ["X-DBL"], ratePlans: ["X-BAR"] },
      { headers: bearer(token) },
    );
    expect(viaConnect.roomTypes[0]!.ratePlans[0]!.days[0]).toMatchObject({ date: "2027-04-03", stopSell: true });
    // opening again clears it
    await post(
      "OTA_HotelAvailNotifRQ",
      availNotif("avail-2", [
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-04-03", end: "2027-04-03", stopSell: false },
      ]),
    );
    expect((await days("2027-04-03", "2027-04-04"))[0].stopSell).toBe(false);
  });

  it("BookingLimit is the availability cap: applied for a client with allotment.write, refused whole (403, Errors) without", async () => {
    const xml = (echo: string) =>
      availNotif(echo, [
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-07-01", end: "2027-07-02", minStay: 3, bookingLimit: 0 },
      ]);
    const denied = await post("OTA_HotelAvailNotifRQ", xml("limit-denied"));
    expect(denied.status).toBe(403);
    expect(denied.body).toContain("<Errors>");
    expect(denied.body).toContain("allotment.write");
    const before = await days("2027-07-01", "2027-07-03");
    expect(before.map((d: Json) => [d.available, d.minStay])).toEqual([
      [1, null],
      [1, null],
    ]);
    const res = await post("OTA_HotelAvailNotifRQ", xml("limit-granted"), undefined, allotToken);
    expect(res.status).toBe(200);
    expect(res.body).toContain("<Success/>");
    expect(res.body).not.toContain("<Warnings>");
    const after = await days("2027-07-01", "2027-07-03");
    expect(after.map((d: Json) => [d.available, d.minStay])).toEqual([
      [0, 3],
      [0, 3],
    ]);
  });

  it("an unknown code refuses the whole message with Errors (404), nothing applied", async () => {
    const res = await post(
      "OTA_HotelRateAmountNotifRQ",
      rateAmountNotif("rate-bad", [
        { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-05-01", end: "2027-05-01", amount: "100.00" },
        { roomType: "NOPE", ratePlan: "X-BAR", start: "2027-05-01", end: "2027-05-01", amount: "100.00" },
      ]),
    );
    expect(res.status).toBe(404);
    expect(res.body).toContain("<Errors>");
    expect(res.body).toContain("NOPE");
    expect((await days("2027-05-01", "2027-05-02"))[0].priceMinor).toBe(null);
  });

  it("the same EchoToken replays the answer; a DOCTYPE is a 400 with Errors", async () => {
    const xml = rateAmountNotif("rate-replay", [
      { roomType: "X-DBL", ratePlan: "X-BAR", start: "2027-06-01", end: "2027-06-01", amount: "150.00" },
    ]);
    await post("OTA_HotelRateAmountNotifRQ", xml);
    const again = await post("OTA_HotelRateAmountNotifRQ", xml);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    const res = await fetch(`${app.baseUrl}/api/v1/ota/${property.code}/OTA_HotelAvailNotifRQ`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/xml" },
      body: `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "http://127.0.0.1:1/">]><OTA_HotelAvailNotifRQ>&e;</OTA_HotelAvailNotifRQ>`,
    });
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain("<OTA_HotelAvailNotifRS");
    expect(schemaErrors(body)).toBe("");
  });
});

describe("docs/partners/ota-xml.md", () => {
  it("its examples run against the demo hotel as documented", { timeout: 90_000 }, async () => {
    await seedDemo(app.deps, app.services.admin);
    for (const [kind, code, externalCode] of [
      ["room_type", "DBL", "ACME-DOUBLE"],
      ["rate_plan", "BB", "ACME-BB"],
    ] as const)
      await setProviderMapping(app.db.pool, { propertyCode: "DEMO-IST", provider: "acme", kind, code, externalCode });
    const demo = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: ["DEMO-IST"],
        scopes: ["reservations.write", "ari.read", "ari.write"],
        approved: true,
      })
    ).accessToken;
    const doc = readFileSync(new URL("../../docs/partners/ota-xml.md", import.meta.url), "utf8");
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
    const created = /cat > scratch\/ota-new.xml <<XML\n([\s\S]*?)\nXML\n/
      .exec(doc)![1]!
      .replaceAll("$FROM", day(40))
      .replaceAll("$NEXT", day(41))
      .replaceAll("$TO", day(42));
    const inline = [...doc.matchAll(/--data-binary \\\n {2}'(<OTA_[^']+)'/g)].map((m) => m[1]!);
    const modified = created
      .replace('ResStatus="Commit"', 'ResStatus="Modify"')
      .replace("ota-bk-2001-new", "ota-bk-2001-mod")
      .replace('Count="2"', 'Count="1"');
    const send = async (message: string, xml: string) => {
      expect(schemaErrors(xml)).toBe("");
      const res = await fetch(`${app.baseUrl}/api/v1/ota/DEMO-IST/${message}`, {
        method: "POST",
        headers: { ...bearer(demo), "content-type": "application/xml" },
        body: xml,
      });
      const body = await res.text();
      expect([res.status, schemaErrors(body)]).toEqual([200, ""]);
      return body;
    };
    const first = await send("OTA_HotelResNotifRQ", created);
    expect(first).toContain('ResResponseType="Committed"');
    const code = /ResID_Value="(R\d+)" ResID_Source="HotelOps"/.exec(first)![1];
    expect(await send("OTA_HotelResNotifRQ", modified)).toContain(`ResID_Value="${code}"`);
    expect(await send("OTA_HotelResNotifRQ", inline[0]!)).toContain('ResResponseType="Cancelled"');
    expect(await send("OTA_HotelRateAmountNotifRQ", inline[1]!)).toContain("<Success/>");
    expect(await send("OTA_HotelAvailNotifRQ", inline[2]!)).toContain("<Success/>");
    const read = (await (
      await fetch(
        `${app.baseUrl}/api/v1/properties/DEMO-IST/ari?from=2027-03-05&to=2027-03-07&roomTypes=ACME-DOUBLE&ratePlans=ACME-BB`,
        { headers: bearer(demo) },
      )
    ).json()) as Json;
    expect(
      read.roomTypes[0].ratePlans[0].days.map((d: Json) => [d.date, d.priceMinor, d.minStay, d.closedToArrival]),
    ).toEqual([
      ["2027-03-05", 320000, 2, false],
      ["2027-03-06", 320000, 2, true],
    ]);
  });
});
