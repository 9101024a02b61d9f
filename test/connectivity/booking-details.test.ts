import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Reservation events carry what the hotel needs: nightly prices, the guests of each room (names only), remarks and a
// payment guarantee by token. Staff read them on the reservation (mobile REST, ReservationService over gRPC);
// webhooks and the partner feed never carry the names; card numbers and security codes are refused, never stored.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let token: string;
let staff: string;

const event = (reference: string, over: Record<string, unknown> = {}) => ({
  eventType: "NEW",
  externalReference: reference,
  channel: "Booking.com",
  arrivalDate: "2027-06-01",
  departureDate: "2027-06-03",
  currency: "TRY",
  holder: { name: "Channel Guest" },
  rooms: [
    {
      roomTypeCode: "X-DBL",
      ratePlanCode: "X-BAR",
      adults: 2,
      children: 0,
      amountMinor: 51000,
      nightlyPrices: [
        { date: "2027-06-01", amountMinor: 24000 },
        { date: "2027-06-02", amountMinor: 27000 },
      ],
      guests: [{ name: "Room Guest" }, { name: "Second Sleeper" }],
    },
  ],
  totalMinor: 51000,
  remarks: ["Quiet room, high floor", "Arriving by car"],
  paymentGuarantee: { token: "pm_1QxYz", cardType: "MC", issuer: "stripe" },
  ...over,
});

async function post(body: unknown, key: string) {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function processed(eventId: string): Promise<Json> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events/${eventId}`, {
      headers: bearer(token),
    });
    const body = (await res.json()) as Json;
    if (body.status !== "QUEUED") return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("not processed");
}

const stored = async (): Promise<number> =>
  (await app.db.pool.query<{ n: number }>("select count(*)::int as n from partner_messages")).rows[0]!.n;

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "BKD-1", businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 3 });
  await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best",
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
  staff = (await createStaffSession(app, { propertyCode: property.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("booking details on reservation events", () => {
  it("REST: nightly prices, guests, remarks and the guarantee reach the reservation staff read (mobile)", async () => {
    const sent = await post(event("BKD-REST"), "bkd-rest");
    expect(sent.status).toBe(202);
    const done = await processed(sent.body.eventId);
    expect(done.status).toBe("PROCESSED");
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${done.reservationId}`, {
      headers: bearer(staff),
    });
    const { reservation } = (await res.json()) as Json;
    expect(reservation).toMatchObject({
      remarks: ["Quiet room, high floor", "Arriving by car"],
      paymentGuarantee: { token: "pm_1QxYz", cardType: "MC", issuer: "stripe" },
      totalMinor: 51000,
    });
    expect(reservation.rooms[0]).toMatchObject({
      nightlyMinor: [24000, 27000],
      guestNames: ["Room Guest", "Second Sleeper"],
    });

    // never in the webhooks' events or the partner feed
    const events = await app.db.pool.query<{ data: unknown }>("select data from domain_events where property_id = $1", [
      property.id,
    ]);
    expect(JSON.stringify(events.rows)).not.toMatch(/Room Guest|Second Sleeper|pm_1QxYz/);
    const feed = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservations`, {
      headers: bearer(token),
    });
    expect(await feed.text()).not.toMatch(/Room Guest|Second Sleeper/);
  });

  it("Connect: the same event; gRPC ReservationService.GetReservation shows the details", async () => {
    const connect = createClient(
      ConnectivityService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
    const e = event("BKD-CONNECT");
    const sent = await connect.createReservationEvent(
      {
        ...e,
        propertyCode: property.code,
        totalMinor: 51000n,
        rooms: e.rooms.map((r) => ({
          ...r,
          amountMinor: BigInt(r.amountMinor),
          nightlyPrices: r.nightlyPrices.map((n) => ({ ...n, amountMinor: BigInt(n.amountMinor) })),
        })),
      },
      { headers: { ...bearer(token), "idempotency-key": "bkd-connect" } },
    );
    const done = await processed(sent.eventId);
    const grpc = createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const { reservation } = await grpc.getReservation(
      { propertyCode: property.code, reservationId: done.reservationId },
      { headers: bearer(staff) },
    );
    expect(reservation?.remarks).toEqual(["Quiet room, high floor", "Arriving by car"]);
    expect(reservation?.paymentGuarantee).toMatchObject({ token: "pm_1QxYz", cardType: "MC", issuer: "stripe" });
    expect(reservation?.rooms[0]).toMatchObject({
      nightlyMinor: [24000n, 27000n],
      guestNames: ["Room Guest", "Second Sleeper"],
    });
  });

  it("a MODIFIED with new guests and prices replaces them; without remarks keeps them", async () => {
    const first = await processed((await post(event("BKD-MOD"), "bkd-mod-1")).body.eventId);
    const mod = event("BKD-MOD", {
      eventType: "MODIFIED",
      remarks: undefined,
      rooms: [
        {
          roomTypeCode: "X-DBL",
          ratePlanCode: "X-BAR",
          adults: 1,
          children: 0,
          amountMinor: 50000,
          nightlyPrices: [
            { date: "2027-06-01", amountMinor: 20000 },
            { date: "2027-06-02", amountMinor: 30000 },
          ],
          guests: [{ name: "Room Guest" }],
        },
      ],
      totalMinor: 50000,
    });
    const done = await processed((await post(mod, "bkd-mod-2")).body.eventId);
    expect(done.reservationId).toBe(first.reservationId);
    const r = await app.services.reservations.get(
      { propertyId: property.id, canOverridePrice: false },
      first.reservationId,
    );
    expect(r.remarks).toEqual(["Quiet room, high floor", "Arriving by car"]);
    expect(r.rooms[0]).toMatchObject({ nightlyMinor: [20000n, 30000n], guestNames: ["Room Guest"] });
  });

  it("card numbers and security codes are refused with 422 naming the field, on REST and Connect; nothing is stored", async () => {
    const before = await stored();
    const inNotes = await post(event("BKD-PAN", { notes: "card 4111 1111 1111 1111 exp 12/29" }), "bkd-pan-1");
    expect(inNotes.status).toBe(422);
    expect(inNotes.body.error.details).toEqual([{ field: "notes", reason: expect.stringContaining("card number") }]);
    expect(JSON.stringify(inNotes.body)).not.toContain("4111");
    const asToken = await post(
      event("BKD-PAN2", { paymentGuarantee: { token: "5555-5555-5555-4444", cardType: "MC" } }),
      "bkd-pan-2",
    );
    expect([asToken.status, asToken.body.error.details[0].field]).toEqual([422, "paymentGuarantee.token"]);
    const cvc = await post(
      event("BKD-CVC", { paymentGuarantee: { token: "pm_1", cardType: "VI", cvc: "123" } }),
      "bkd-cvc",
    );
    expect([cvc.status, cvc.body.error.details]).toEqual([
      422,
      [{ field: "paymentGuarantee.cvc", reason: "is a card security code, which is never accepted" }],
    ]);
    const connect = createClient(
      ConnectivityService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
    const err = await connect
      .createReservationEvent(
        { propertyCode: property.code, eventType: "NEW", externalReference: "BKD-PAN3", notes: "4111111111111111" },
        { headers: { ...bearer(token), "idempotency-key": "bkd-pan-3" } },
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).message).toContain("notes");
    expect((err as ConnectError).message).not.toContain("4111");
    expect(await stored()).toBe(before);
  });

  it("nightly prices that miss a night or do not add up are 422", async () => {
    const bad = event("BKD-BAD");
    (bad.rooms[0] as Json).nightlyPrices = [{ date: "2027-06-01", amountMinor: 51000 }];
    const res = await post(bad, "bkd-bad");
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe("rooms[0].nightlyPrices");
  });
});
