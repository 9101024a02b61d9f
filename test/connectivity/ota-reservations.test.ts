import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty, createStaffSession } from "../helpers/auth.ts";
import { resNotif, schemaErrors, type OtaBooking } from "../helpers/ota.ts";

// OTA_HotelResNotifRQ over POST /api/v1/ota/{propertyCode}/OTA_HotelResNotifRQ: certification-style new, modify and
// cancel, the same booking sent over JSON then modified over XML, and hostile documents. Every request message and
// every answer is checked against the OpenTravel 2015B schemas (test/fixtures/ota).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let token: string;

async function ota(xml: string, opts: { code?: string; token?: string; type?: string; key?: string } = {}) {
  const res = await fetch(`${app.baseUrl}/api/v1/ota/${opts.code ?? property.code}/OTA_HotelResNotifRQ`, {
    method: "POST",
    headers: {
      ...(opts.token === "" ? {} : bearer(opts.token ?? token)),
      "content-type": opts.type ?? "application/xml",
      ...(opts.key === undefined ? {} : { "idempotency-key": opts.key }),
    },
    body: xml,
  });
  const body = await res.text();
  return { status: res.status, body, headers: res.headers };
}

/** Sends a schema-valid message and checks the answer is schema-valid too. */
async function send(b: OtaBooking, opts: { key?: string } = {}) {
  const xml = resNotif(b);
  expect(schemaErrors(xml)).toBe("");
  const res = await ota(xml, opts);
  expect(schemaErrors(res.body)).toBe("");
  return res;
}

const hotelId = (xml: string): string | undefined => /ResID_Value="([^"]+)" ResID_Source="HotelOps-Id"/.exec(xml)?.[1];
const hotelCode = (xml: string): string | undefined => /ResID_Value="([^"]+)" ResID_Source="HotelOps"/.exec(xml)?.[1];

async function reservation(id: string): Promise<Json> {
  return app.services.reservations.get({ propertyId: property.id, canOverridePrice: false }, id);
}

const booking = (over: Partial<OtaBooking> = {}): OtaBooking => ({
  status: "Commit",
  echoToken: `echo-${Math.random().toString(36).slice(2)}`,
  reference: "OTA-1",
  from: "2027-06-01",
  to: "2027-06-03",
  rooms: [{ roomType: "X-DBL", ratePlan: "X-BAR", adults: 2, nights: ["240.00", "260.00"], guests: ["Ayse Yilmaz"] }],
  remarks: ["Late arrival, around 23:00"],
  token: { token: "tok4hN2kX9", cardCode: "VI", provider: "Booking.com" },
  ...over,
});

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "OTA-1", businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 3 });
  await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  await inventory.createRoom(property.id, { number: "102", roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2027-12-31",
    amountMinor: 25000n,
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
      scopes: ["reservations.write", "reservations.read"],
      approved: true,
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("OTA_HotelResNotifRQ", () => {
  it("Commit creates the booking and answers Success with the hotel's reservation id; Modify and Cancel follow", async () => {
    const created = await send(booking());
    expect(created.status).toBe(200);
    expect(created.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(created.body).toContain("<Success/>");
    expect(created.body).toContain('ResResponseType="Committed"');
    const id = hotelId(created.body)!;
    const r = await reservation(id);
    expect(r).toMatchObject({
      code: hotelCode(created.body),
      source: "CHANNEL",
      channel: "Booking.com",
      externalReference: "OTA-1",
      holderName: "Channel Guest",
      arrivalDate: "2027-06-01",
      departureDate: "2027-06-03",
      remarks: ["Late arrival, around 23:00"],
      paymentGuarantee: { token: "tok4hN2kX9", cardType: "VI", issuer: "Booking.com" },
    });
    expect(r.rooms[0]).toMatchObject({
      nightlyMinor: [24000n, 26000n],
      totalMinor: 50000n,
      guestNames: ["Ayse Yilmaz"],
    });

    const modified = await send(
      booking({
        status: "Modify",
        to: "2027-06-04",
        rooms: [{ roomType: "X-DBL", ratePlan: "X-BAR", adults: 3, nights: ["240.00", "260.00", "270.00"] }],
      }),
    );
    expect(modified.body).toContain('ResResponseType="Modified"');
    expect(hotelId(modified.body)).toBe(id);
    const m = await reservation(id);
    expect(m).toMatchObject({ departureDate: "2027-06-04", adults: 3 });
    expect(m.rooms[0]).toMatchObject({ nightlyMinor: [24000n, 26000n, 27000n], guestNames: ["Ayse Yilmaz"] });

    const cancelled = await send(booking({ status: "Cancel", rooms: [] }));
    expect(cancelled.body).toContain('ResResponseType="Cancelled"');
    expect(hotelId(cancelled.body)).toBe(id);
    expect((await reservation(id)).status).toBe("CANCELLED");
  });

  it("a booking sent over JSON is modified over XML by its reference (the staff read over gRPC shows it)", async () => {
    const json = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": "json-then-xml" },
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: "MIX-1",
        channel: "Booking.com",
        arrivalDate: "2027-07-01",
        departureDate: "2027-07-03",
        rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 50000 }],
        totalMinor: 50000,
        currency: "TRY",
        holder: { name: "Channel Guest" },
      }),
    });
    expect(json.status).toBe(202);
    const xml = await send(
      booking({
        status: "Modify",
        reference: "MIX-1",
        from: "2027-07-01",
        to: "2027-07-02",
        rooms: [{ roomType: "X-DBL", ratePlan: "X-BAR", adults: 1, nights: ["199.00"], guests: ["In Flight"] }],
      }),
    );
    expect(xml.body).toContain("<Success/>");
    const id = hotelId(xml.body)!;
    const staff = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const grpc = createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const { reservation: r } = await grpc.getReservation(
      { propertyCode: property.code, reservationId: id },
      { headers: bearer(staff.accessToken) },
    );
    expect(r).toMatchObject({
      externalReference: "MIX-1",
      departureDate: "2027-07-02",
      remarks: ["Late arrival, around 23:00"],
    });
    expect(r!.rooms[0]).toMatchObject({ nightlyMinor: [19900n], guestNames: ["In Flight"] });
    expect(r!.paymentGuarantee).toMatchObject({ token: "tok4hN2kX9", cardType: "VI" });
  });

  it("the same message again (same EchoToken) is replayed, never a second booking", async () => {
    const b = booking({ reference: "OTA-REPLAY", echoToken: "replay-1" });
    const first = await send(b);
    const again = await send(b);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(hotelId(again.body)).toBe(hotelId(first.body));
    const other = await ota(resNotif({ ...b, reference: "OTA-OTHER" }));
    expect(other.status).toBe(409);
    expect(schemaErrors(other.body)).toBe("");
    expect(other.body).toContain("idempotency_conflict");
  });

  it("a rejected booking (unmapped room code) answers Errors with the reason", async () => {
    const res = await send(
      booking({
        reference: "OTA-BAD",
        rooms: [{ roomType: "NOPE", ratePlan: "X-BAR", adults: 2, nights: ["1.00", "1.00"] }],
      }),
    );
    expect(res.body).toContain("<Errors>");
    expect(res.body).toContain("is not mapped for provider acme");
    expect(res.body).not.toContain("<Success/>");
  });

  it("refuses card numbers and security codes with 422 naming the element; nothing is stored", async () => {
    const before = await app.db.pool.query("select count(*)::int as n from partner_messages");
    const pan = await ota(
      resNotif(
        booking({
          reference: "OTA-PAN",
          cardXml: "<CardNumber><PlainText>4111 1111 1111 1111</PlainText></CardNumber>",
        }),
      ),
    );
    expect(pan.status).toBe(422);
    expect(schemaErrors(pan.body)).toBe("");
    expect(pan.body).toMatch(/PaymentCard\.CardNumber(\[\d\])?\.PlainText/);
    expect(pan.body).not.toContain("4111");
    const cvc = await ota(
      resNotif(booking({ reference: "OTA-CVC", cardXml: "<SeriesCode><PlainText>123</PlainText></SeriesCode>" })),
    );
    expect(cvc.status).toBe(422);
    expect(cvc.body).toContain("SeriesCode");
    const inRemark = await ota(
      resNotif(booking({ reference: "OTA-PAN2", remarks: ["card 5555-5555-5555-4444 please"] })),
    );
    expect(inRemark.status).toBe(422);
    const after = await app.db.pool.query("select count(*)::int as n from partner_messages");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("refuses DOCTYPEs (XXE, billion laughs) with 400 and an OTA Errors answer, never expanding them", async () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><OTA_HotelResNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" Version="1.0" ResStatus="Commit"><HotelReservations><HotelReservation><UniqueID Type="14" ID="&x;"/></HotelReservation></HotelReservations></OTA_HotelResNotifRQ>`;
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]><OTA_HotelResNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05">&lol4;</OTA_HotelResNotifRQ>`;
    for (const body of [xxe, laughs]) {
      const res = await ota(body);
      expect(res.status).toBe(400);
      expect(res.body).toContain("<Errors>");
      expect(res.body).not.toContain("root:");
      expect(res.body).not.toContain("lollol");
      expect(schemaErrors(res.body)).toBe("");
    }
    const malformed = await ota("<OTA_HotelResNotifRQ><HotelReservations></OTA_HotelResNotifRQ>");
    expect(malformed.status).toBe(400);
    const big = await ota(`<OTA_HotelResNotifRQ>${" ".repeat(300 * 1024)}</OTA_HotelResNotifRQ>`);
    expect(big.status).toBe(413);
  });

  it("keeps the partner rules: bearer token, scope, media type, another property 404", async () => {
    const xml = resNotif(booking({ reference: "OTA-AUTH" }));
    const anonymous = await ota(xml, { token: "" });
    expect([anonymous.status, anonymous.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);
    expect(anonymous.body).toContain('Code="497"');
    const reader = (
      await createTestClient(app, {
        kind: "partner",
        provider: "acme",
        propertyCodes: [property.code],
        scopes: ["reservations.read"],
        approved: true,
      })
    ).accessToken;
    expect((await ota(xml, { token: reader })).status).toBe(403);
    const other = await createTestProperty(app, { code: "OTA-2", businessDate: "2027-01-01" });
    expect((await ota(xml, { code: other.code })).status).toBe(404);
    expect((await ota(xml, { type: "application/json" })).status).toBe(415);
    const get = await fetch(`${app.baseUrl}/api/v1/ota/${property.code}/OTA_HotelResNotifRQ`, {
      headers: bearer(token),
    });
    expect(get.status).toBe(405);
    const unknown = await ota(xml.replace(/OTA_HotelResNotifRQ/g, "OTA_HotelResRQ"));
    expect(unknown.status).toBe(400);
  });
});
