import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oauth from "oauth4webapi";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { createReservationService, stayInRoom } from "../../src/modules/reservations/index.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Contract faults of the connectivity API found by driving it as a new partner would: every call over HTTP with a
// token from a real OAuth client library (oauth4webapi), outcomes read back through the API.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let partnerToken: string;
let internalToken: string;
let roomTypeId: string;

const insecure = { [oauth.allowInsecureRequests]: true };

/** A token the way a partner gets one: oauth4webapi against POST /api/v1/oauth/token. */
async function oauthToken(clientId: string, secret: string): Promise<string> {
  const as: oauth.AuthorizationServer = { issuer: app.baseUrl, token_endpoint: `${app.baseUrl}/api/v1/oauth/token` };
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    { client_id: clientId },
    oauth.ClientSecretBasic(secret),
    new URLSearchParams(),
    insecure,
  );
  return (await oauth.processClientCredentialsResponse(as, { client_id: clientId }, res)).access_token;
}

async function get(path: string, token = partnerToken): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: bearer(token) });
  return { status: res.status, body: await res.json() };
}

async function send(body: Json): Promise<Json> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: { ...bearer(partnerToken), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  const { eventId } = (await res.json()) as Json;
  for (let i = 0; i < 200; i++) {
    const outcome = (await get(`/api/v1/properties/${property.code}/reservation-events/${eventId}`)).body;
    if (outcome.status !== "QUEUED") return outcome;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`event ${eventId} was not processed`);
}

const stay = (
  ref: string,
  channel: string | undefined,
  arrivalDate: string,
  departureDate: string,
  amountMinor: number,
) => ({
  eventType: "NEW",
  externalReference: ref,
  ...(channel !== undefined ? { channel } : {}),
  arrivalDate,
  departureDate,
  rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor }],
  totalMinor: amountMinor,
  currency: "TRY",
  holder: { name: "Channel Guest" },
});

async function feedAll(): Promise<Json[]> {
  const items: Json[] = [];
  let cursor = "";
  for (let i = 0; i < 50; i++) {
    const page = (
      await get(`/api/v1/properties/${property.code}/reservations?limit=500${cursor !== "" ? `&cursor=${cursor}` : ""}`)
    ).body;
    items.push(...page.data);
    cursor = page.nextCursor;
    if (!page.hasMore) break;
  }
  return items;
}

const eventData = async (type: string, reservationId: string): Promise<Json[]> =>
  (
    await app.db.pool.query<{ data: Json }>(
      "select data from domain_events where property_id = $1 and type = $2 and data ->> 'id' = $3 order by created_at",
      [property.id, type, reservationId],
    )
  ).rows.map((r) => r.data);

const decode = (cursor: string) => Buffer.from(cursor, "base64url").toString();

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "BETA-1", businessDate: "2027-03-01" });
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  roomTypeId = dbl.id;
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
    to: "2027-12-31",
    amountMinor: 250000n,
  });
  await setProviderMapping(app.db.pool, {
    propertyCode: property.code,
    provider: "acme",
    kind: "room_type",
    code: "DBL",
    externalCode: "X-DBL",
  });
  await setProviderMapping(app.db.pool, {
    propertyCode: property.code,
    provider: "acme",
    kind: "rate_plan",
    code: "BAR",
    externalCode: "X-BAR",
  });
  const partner = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read", "availability.read"],
    approved: true,
  });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [property.code],
    scopes: ["admin", "reservations.read", "reservations.write"],
  });
  partnerToken = await oauthToken(partner.clientId, partner.clientSecret);
  internalToken = await oauthToken(internal.clientId, internal.clientSecret);
});
afterAll(async () => {
  await app?.close();
});

describe("fault 1: the sales channel is kept and identifies the booking with the provider and reference", () => {
  it("two OTAs reusing one reference behind one channel manager get two reservations, each with its channel in the feed and webhooks", async () => {
    const booking = await send(stay("OTA-777", "Booking.com", "2027-04-01", "2027-04-03", 500000));
    const expedia = await send(stay("OTA-777", "Expedia", "2027-04-01", "2027-04-03", 500000));
    expect(booking.status).toBe("PROCESSED");
    expect(expedia.status).toBe("PROCESSED");
    expect(expedia.reservationId).not.toBe(booking.reservationId);
    // a repeated NEW of the same (provider, channel, reference) still returns the first one
    expect((await send(stay("OTA-777", "Expedia", "2027-04-01", "2027-04-03", 500000))).reservationId).toBe(
      expedia.reservationId,
    );
    const feed = await feedAll();
    const channels = Object.fromEntries(
      feed.filter((r) => r.externalReference === "OTA-777").map((r) => [r.id, r.channel]),
    );
    expect(channels).toEqual({ [booking.reservationId]: "Booking.com", [expedia.reservationId]: "Expedia" });
    expect((await eventData("reservation.created", booking.reservationId))[0]).toMatchObject({
      channel: "Booking.com",
      source: "CHANNEL",
      externalReference: "OTA-777",
    });
    // a cancellation of one channel's booking leaves the other's alone
    expect(
      (await send({ eventType: "CANCELLED", externalReference: "OTA-777", channel: "Expedia" })).reservationId,
    ).toBe(expedia.reservationId);
    const after = Object.fromEntries(
      (await feedAll()).filter((r) => r.externalReference === "OTA-777").map((r) => [r.channel, r.status]),
    );
    expect(after).toEqual({ "Booking.com": "GUARANTEED", Expedia: "CANCELLED" });
  });

  it("a booking sent without a channel has channel null", async () => {
    const plain = await send(stay("NOCH-1", undefined, "2027-04-05", "2027-04-06", 250000));
    expect((await feedAll()).find((r) => r.id === plain.reservationId).channel).toBeNull();
  });
});

describe("fault 2: a channel booking keeps the channel's amounts on every revision", () => {
  it("MODIFIED keeps the sent amount (720000, not our 750000) and records the difference on the reservation", async () => {
    const made = await send(stay("PRICE-1", "Booking.com", "2027-05-01", "2027-05-03", 480000));
    const mod = await send({
      ...stay("PRICE-1", "Booking.com", "2027-05-01", "2027-05-04", 720000),
      eventType: "MODIFIED",
    });
    expect(mod.status).toBe("PROCESSED");
    const reservations = createClient(ReservationService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const { reservation } = await reservations.getReservation(
      { propertyCode: property.code, reservationId: made.reservationId },
      { headers: bearer(internalToken) },
    );
    expect(reservation!.totalMinor).toBe(720000n);
    expect(reservation!.rooms[0]!.totalMinor).toBe(720000n);
    expect(reservation!.rateDifferenceMinor).toBe(720000n - 3n * 250000n);
  });
});

describe("fault 3: a channel cancellation ends any reservation state in CANCELLED", () => {
  it("cancels an in-house stay (cancelledAt set, reservation.cancelled emitted) and releases the nights still ahead", async () => {
    const made = await send(stay("INHOUSE-1", "Booking.com", "2027-03-01", "2027-03-04", 750000));
    const reservations = createReservationService({ transact: app.deps.transact, pool: app.db.pool, clock: app.clock });
    const actor = { propertyId: property.id, canOverridePrice: false };
    const r = await reservations.get(actor, made.reservationId);
    const rooms = await app.db.pool.query<{ id: string }>(
      "select id from rooms where property_id = $1 and number = '104'",
      [property.id],
    );
    await app.db.pool.query("update rooms set status = 'INSPECTED' where id = $1", [rooms.rows[0]!.id]);
    expect((await reservations.checkIn(actor, r.id, r.rooms[0]!.id, rooms.rows[0]!.id)).status).toBe("IN_HOUSE");
    const soldBefore = (
      await get(`/api/v1/properties/${property.code}/availability?from=2027-03-01&to=2027-03-04&roomTypes=DBL`)
    ).body.roomTypes[0].days.map((d: Json) => d.sold);

    const cancel = await send({ eventType: "CANCELLED", externalReference: "INHOUSE-1", channel: "Booking.com" });
    expect(cancel).toMatchObject({ status: "PROCESSED", reservationId: r.id, error: null });
    const item = (await feedAll()).find((x) => x.id === r.id);
    expect(item.status).toBe("CANCELLED");
    expect(item.cancelledAt).toMatch(/^2\d{3}-/);
    expect(await eventData("reservation.cancelled", r.id)).toHaveLength(1);
    const soldAfter = (
      await get(`/api/v1/properties/${property.code}/availability?from=2027-03-01&to=2027-03-04&roomTypes=DBL`)
    ).body.roomTypes[0].days.map((d: Json) => d.sold);
    // business date 2027-03-01: every night of the stay is still ahead
    expect(soldAfter).toEqual(soldBefore.map((n: number) => n - 1));
  });
});

describe("fault 4: the feed cursor never moves backwards", () => {
  it("updatedSince with no match points nextCursor at the head, and the next poll replays nothing (REST, Connect, gRPC)", async () => {
    const all = await feedAll();
    expect(all.length).toBeGreaterThan(3);
    const future = "2099-01-01T00:00:00.000Z";
    const empty = (await get(`/api/v1/properties/${property.code}/reservations?updatedSince=${future}`)).body;
    expect(empty.data).toEqual([]);
    expect(decode(empty.nextCursor)).not.toBe("v1:0");
    const next = (await get(`/api/v1/properties/${property.code}/reservations?cursor=${empty.nextCursor}`)).body;
    expect(next.data).toEqual([]);
    for (const transport of [
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: app.baseUrl }),
    ]) {
      const client = createClient(ConnectivityService, transport);
      const page = await client.listReservations(
        { propertyCode: property.code, updatedSince: timestampFromDate(new Date(future)) },
        { headers: bearer(partnerToken) },
      );
      expect(page.data).toEqual([]);
      expect(page.nextCursor).toBe(empty.nextCursor);
    }
  });
});

describe("fault 5: one value for 'none', the provider's codes beside ours", () => {
  it("shows the partner's room type code beside ours in the feed, and null for no external reference in feed and webhooks", async () => {
    const reservations = createReservationService({ transact: app.deps.transact, pool: app.db.pool, clock: app.clock });
    const rate = await app.db.pool.query<{ id: string }>("select id from rate_plans where property_id = $1", [
      property.id,
    ]);
    const { reservation } = await reservations.create(
      { propertyId: property.id, canOverridePrice: false },
      {
        source: "DIRECT",
        channel: null,
        externalReference: null,
        holderName: "Walk In",
        arrivalDate: "2027-06-10",
        departureDate: "2027-06-11",
        rooms: [{ roomTypeId, ratePlanId: rate.rows[0]!.id, adults: 1 }],
      },
    );
    const item = (await feedAll()).find((x) => x.id === reservation.id);
    expect(item.externalReference).toBeNull();
    expect(item.roomTypes).toEqual(["DBL"]);
    expect(item.roomTypeCodes).toEqual([{ code: "DBL", externalCode: "X-DBL" }]);
    expect((await eventData("reservation.created", reservation.id))[0].externalReference).toBeNull();
  });
});

describe("fault 8: the release is labelled v1 beta", () => {
  it("in the status endpoint, the capabilities, the OpenAPI info (REST) and over gRPC", async () => {
    const status = (await (await fetch(`${app.baseUrl}/api/v1/status`)).json()) as Json;
    expect(status).toMatchObject({ apiVersion: "v1", partnerApiRelease: "v1 beta" });
    expect((await get("/api/v1/capabilities")).body.apiRelease).toBe("v1 beta");
    const doc = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as Json;
    expect(doc.info.description).toContain("v1 beta");
    const grpcStatus = await createClient(StatusService, createGrpcTransport({ baseUrl: app.baseUrl })).getStatus({});
    expect(grpcStatus.partnerApiRelease).toBe("v1 beta");
    const caps = await createClient(ConnectivityService, createGrpcTransport({ baseUrl: app.baseUrl })).getCapabilities(
      {},
      { headers: bearer(partnerToken) },
    );
    expect(caps.apiRelease).toBe("v1 beta");
  });
});
