import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { readOutbox } from "../../src/lib/mail.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// A booking a channel already sold is accepted when its room type is full: the reservation lists the nights it is
// short, availability counts them as `overbooked`, the property's staff holding reservations.overbook get a panel
// notification and an e-mail. Staff and internal creates are refused with 409 sold_out unless they hold
// reservations.overbook and ask (`overbook`). The hotel has 4 suites; one night costs 100.00.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let app: TestApp;
let dataDir: string;
let property: { id: string; code: string };
let suite: { id: string };
let bar: { id: string };
let manager: { accessToken: string; email: string };
let frontDesk: { accessToken: string; email: string };
let partner: { accessToken: string };
let pms: { accessToken: string };
let pmsAdmin: { accessToken: string };
let connect: Transport;
let grpc: Transport;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "hotelops-overbook-"));
  app = await startTestApp({ env: { DATA_DIR: dataDir } });
  property = await createTestProperty(app, { code: "OVB-1", businessDate: "2027-05-01" });
  const inventory = app.services.inventory;
  suite = await inventory.createRoomType(property.id, { code: "SUITE", name: "Suite", maxOccupancy: 2 });
  for (let i = 1; i <= 4; i++) await inventory.createRoom(property.id, { number: `50${i}`, roomTypeId: suite.id });
  bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [suite.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: suite.id,
    from: "2027-05-01",
    to: "2027-12-31",
    amountMinor: 10000n,
  });
  for (const [kind, code, externalCode] of [
    ["room_type", "SUITE", "BDC-SUITE"],
    ["rate_plan", "BAR", "BDC-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: property.code, provider: "acme", kind, code, externalCode });
  partner = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read", "availability.read"],
    approved: true,
  });
  pms = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read", "availability.read"],
  });
  pmsAdmin = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [property.code],
    scopes: ["admin", "reservations.write", "reservations.read", "availability.read"],
  });
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  frontDesk = await createStaffSession(app, { propertyCode: property.code, role: "front_desk" });
  connect = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
  grpc = createGrpcTransport({ baseUrl: app.baseUrl });
});
afterAll(async () => {
  await app?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

async function sendEvent(body: Record<string, unknown>): Promise<Json> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: { ...bearer(partner.accessToken), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  const { eventId } = (await res.json()) as { eventId: string };
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events/${eventId}`, {
      headers: bearer(partner.accessToken),
    });
    const outcome = (await r.json()) as Json;
    if (outcome.status !== "QUEUED") return outcome;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`event ${eventId} was not processed`);
}

/** A Booking.com booking of one suite over [arrival, departure) at 100.00 a night. */
const booking = (ref: string, arrival: string, departure: string, nights: number, eventType = "NEW") => ({
  eventType,
  externalReference: ref,
  channel: "Booking.com",
  arrivalDate: arrival,
  departureDate: departure,
  rooms: [{ roomTypeCode: "BDC-SUITE", ratePlanCode: "BDC-BAR", adults: 2, children: 0, amountMinor: 10000 * nights }],
  totalMinor: 10000 * nights,
  currency: "TRY",
  holder: { name: "Channel Guest" },
});

async function restGet(path: string, token: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: bearer(token) });
  return { status: res.status, body: await res.json() };
}

/** The suite's availability days over REST (partner), Connect and gRPC (InventoryService); all three must agree. */
async function suiteDays(from: string, to: string): Promise<Json[]> {
  const rest = await restGet(
    `/api/v1/properties/${property.code}/availability?from=${from}&to=${to}&roomTypes=SUITE`,
    partner.accessToken,
  );
  expect(rest.status).toBe(200);
  const restDays = rest.body.roomTypes[0].days;
  for (const transport of [connect, grpc]) {
    const inventory = createClient(InventoryService, transport);
    const answer = await inventory.getAvailability(
      { propertyCode: property.code, from, to, roomTypeCodes: ["SUITE"] },
      { headers: bearer(pms.accessToken) },
    );
    expect(
      answer.roomTypes[0]!.days.map((d) => ({
        date: d.date,
        total: d.total,
        sold: d.sold,
        available: d.available,
        overbooked: d.overbooked,
      })),
    ).toEqual(
      restDays.map((d: Json) => ({
        date: d.date,
        total: d.total,
        sold: d.sold,
        available: d.available,
        overbooked: d.overbooked,
      })),
    );
  }
  return restDays;
}

/** The reservation over REST (mobile), Connect and gRPC (ReservationService): its overbooking as each face says it. */
async function overbookingOf(reservationId: string): Promise<{ overbooked: boolean; nights: Json[] }> {
  const rest = await restGet(`/api/mobile/v1/reservations/${reservationId}`, manager.accessToken);
  expect(rest.status).toBe(200);
  const restView = { overbooked: rest.body.reservation.overbooked, nights: rest.body.reservation.overbookedNights };
  for (const transport of [connect, grpc]) {
    const { reservation } = await createClient(ReservationService, transport).getReservation(
      { propertyCode: property.code, reservationId },
      { headers: bearer(pms.accessToken) },
    );
    expect({
      overbooked: reservation!.overbooked,
      nights: reservation!.overbookedNights.map((n) => ({
        date: n.date,
        roomTypeId: n.roomTypeId,
        roomTypeCode: n.roomTypeCode,
        rooms: n.rooms,
      })),
    }).toEqual(restView);
  }
  return restView;
}

async function availabilityEvents(): Promise<Json[]> {
  const { rows } = await app.db.pool.query<{ data: Json }>(
    "select data from domain_events where property_id = $1 and type = 'availability.changed' order by created_at, ctid",
    [property.id],
  );
  return rows.map((r) => r.data);
}

async function mailTo(email: string, subject: RegExp): Promise<{ subject: string; text: string }[]> {
  for (let i = 0; i < 200; i++) {
    const found = (await readOutbox(dataDir)).filter((m) => m.to === email && subject.test(m.subject));
    if (found.length > 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [];
}

async function failure(work: Promise<unknown>): Promise<{ code: Code; appCode: string | null }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.code, appCode: err.metadata.get("x-error-code") };
    throw err;
  }
  throw new Error("expected the call to fail");
}

describe("channel bookings beyond a full room type", () => {
  it("the 5th Booking.com NEW for 4 suites is PROCESSED, flagged, counted, announced and e-mailed", async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const outcome = await sendEvent(booking(`BK-${i}`, "2027-06-01", "2027-06-03", 2));
      expect(outcome).toMatchObject({ status: "PROCESSED", error: null });
      ids.push(outcome.reservationId);
    }
    for (const id of ids.slice(0, 4)) expect(await overbookingOf(id)).toEqual({ overbooked: false, nights: [] });
    const fifth = ids[4]!;
    expect(await overbookingOf(fifth)).toEqual({
      overbooked: true,
      nights: [
        { date: "2027-06-01", roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 1 },
        { date: "2027-06-02", roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 1 },
      ],
    });

    const days = await suiteDays("2027-06-01", "2027-06-04");
    expect(days).toEqual([
      {
        date: "2027-06-01",
        total: 4,
        sold: 5,
        blocked: 0,
        outOfOrder: 0,
        available: 0,
        overbooked: 1,
        availabilityCap: null,
      },
      {
        date: "2027-06-02",
        total: 4,
        sold: 5,
        blocked: 0,
        outOfOrder: 0,
        available: 0,
        overbooked: 1,
        availabilityCap: null,
      },
      {
        date: "2027-06-03",
        total: 4,
        sold: 0,
        blocked: 0,
        outOfOrder: 0,
        available: 4,
        overbooked: 0,
        availabilityCap: null,
      },
    ]);
    // availability.changed for the overbooked stay, as for every booking
    expect((await availabilityEvents()).filter((e) => e.from === "2027-06-01" && e.to === "2027-06-03")).toHaveLength(
      5,
    );

    // the manager (reservations.overbook) is told in the panel and by e-mail; the front desk is not
    const notes = await restGet("/api/panel/v1/notifications", manager.accessToken);
    expect(notes.status).toBe(200);
    const note = notes.body.notifications.find((n: Json) => n.kind === "reservation.overbooked");
    expect(note).toMatchObject({ data: { reservationId: fifth } });
    expect(note.body).toContain("SUITE 1 room on 2027-06-01, 2027-06-02");
    expect(note.body).not.toContain("Channel Guest");
    const desk = await restGet("/api/panel/v1/notifications", frontDesk.accessToken);
    expect(desk.body.notifications.filter((n: Json) => n.kind === "reservation.overbooked")).toEqual([]);
    const mails = await mailTo(manager.email, /^Overbooking: /);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe(`${note.title} (${property.code})`);
    expect(mails[0]!.text).toContain("Booking.com booking");
    expect(mails[0]!.text).toContain("reference BK-5");
    expect((await readOutbox(dataDir)).filter((m) => m.to === frontDesk.email)).toEqual([]);
  });

  it("a MODIFIED that grows a stay onto a full night is PROCESSED and flagged for the nights added", async () => {
    for (let i = 1; i <= 4; i++)
      expect(await sendEvent(booking(`MD-${i}`, "2027-07-02", "2027-07-03", 1))).toMatchObject({
        status: "PROCESSED",
      });
    const first = await sendEvent(booking("MD-5", "2027-07-01", "2027-07-02", 1));
    expect(await overbookingOf(first.reservationId)).toEqual({ overbooked: false, nights: [] });
    const grown = await sendEvent(booking("MD-5", "2027-07-01", "2027-07-03", 2, "MODIFIED"));
    expect(grown).toMatchObject({ status: "PROCESSED", reservationId: first.reservationId, error: null });
    expect(await overbookingOf(first.reservationId)).toEqual({
      overbooked: true,
      nights: [{ date: "2027-07-02", roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 1 }],
    });
    expect((await suiteDays("2027-07-01", "2027-07-03")).map((d) => [d.sold, d.available, d.overbooked])).toEqual([
      [1, 3, 0],
      [5, 0, 1],
    ]);
    expect(
      (await availabilityEvents()).filter((e) => e.from === "2027-07-01" && e.to === "2027-07-03"),
    ).not.toHaveLength(0);
  });

  it("a later cancellation of another booking clears the shortfall and keeps the counts right", async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++)
      ids.push((await sendEvent(booking(`CX-${i}`, "2027-08-01", "2027-08-02", 1))).reservationId);
    expect((await suiteDays("2027-08-01", "2027-08-02"))[0]).toMatchObject({ sold: 6, available: 0, overbooked: 2 });
    expect((await overbookingOf(ids[4]!)).overbooked).toBe(true);
    expect((await overbookingOf(ids[5]!)).overbooked).toBe(true);

    // one room comes back: the booking that waited longest (the 5th) gets it, the 6th is still short
    expect(await sendEvent({ eventType: "CANCELLED", externalReference: "CX-1" })).toMatchObject({
      status: "PROCESSED",
    });
    expect((await suiteDays("2027-08-01", "2027-08-02"))[0]).toMatchObject({ sold: 5, available: 0, overbooked: 1 });
    expect((await overbookingOf(ids[4]!)).overbooked).toBe(false);
    expect((await overbookingOf(ids[5]!)).overbooked).toBe(true);

    // the short booking itself cancelled: nothing is over any more
    expect(await sendEvent({ eventType: "CANCELLED", externalReference: "CX-6" })).toMatchObject({
      status: "PROCESSED",
    });
    expect((await suiteDays("2027-08-01", "2027-08-02"))[0]).toMatchObject({ sold: 4, available: 0, overbooked: 0 });
    const { rows } = await app.db.pool.query(
      "select 1 from room_type_overbookings where property_id = $1 and date = '2027-08-01'",
      [property.id],
    );
    expect(rows).toEqual([]);
    // a staff cancellation frees a room for sale again
    await createClient(ReservationService, grpc).cancelReservation(
      { propertyCode: property.code, reservationId: ids[1]! },
      { headers: bearer(pms.accessToken) },
    );
    expect((await suiteDays("2027-08-01", "2027-08-02"))[0]).toMatchObject({ sold: 3, available: 1, overbooked: 0 });
  });

  it("a booking of two suites on a full night is short two; one room back leaves it short one", async () => {
    const night = { arrival: "2027-10-01", departure: "2027-10-02" };
    for (let i = 1; i <= 4; i++) await sendEvent(booking(`TW-${i}`, night.arrival, night.departure, 1));
    const two = booking("TW-5", night.arrival, night.departure, 1);
    two.rooms = [two.rooms[0]!, two.rooms[0]!];
    two.totalMinor = 20000;
    const pair = await sendEvent(two);
    expect(pair).toMatchObject({ status: "PROCESSED" });
    expect((await overbookingOf(pair.reservationId)).nights).toEqual([
      { date: night.arrival, roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 2 },
    ]);
    await sendEvent({ eventType: "CANCELLED", externalReference: "TW-2" });
    expect((await overbookingOf(pair.reservationId)).nights).toEqual([
      { date: night.arrival, roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 1 },
    ]);
    expect((await suiteDays(night.arrival, night.departure))[0]).toMatchObject({ sold: 5, overbooked: 1 });
    await sendEvent({ eventType: "CANCELLED", externalReference: "TW-3" });
    expect(await overbookingOf(pair.reservationId)).toEqual({ overbooked: false, nights: [] });
    expect((await suiteDays(night.arrival, night.departure))[0]).toMatchObject({ sold: 4, overbooked: 0 });
  });
});

describe("staff and internal creates on a full room type", () => {
  const full = { arrivalDate: "2027-09-01", departureDate: "2027-09-02" };

  beforeAll(async () => {
    for (let i = 1; i <= 4; i++) await sendEvent(booking(`ST-${i}`, full.arrivalDate, full.departureDate, 1));
  });

  async function mobileCreate(
    token: string,
    over: Record<string, unknown> = {},
  ): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({
        holderName: "Desk Guest",
        ...full,
        roomTypeId: suite.id,
        ratePlanId: bar.id,
        adults: 2,
        totalMinor: 10000,
        currency: "TRY",
        ...over,
      }),
    });
    return { status: res.status, body: await res.json() };
  }

  const createRequest = (overbook: boolean) => ({
    propertyCode: property.code,
    holderName: "Desk Guest",
    ...full,
    rooms: [{ roomTypeId: suite.id, ratePlanId: bar.id, adults: 2, children: 0 }],
    overbook,
  });

  it("REST: 409 sold_out without the permission or without asking; 201 and flagged with both", async () => {
    const desk = await mobileCreate(frontDesk.accessToken);
    expect(desk.status).toBe(409);
    expect(desk.body.error.code).toBe("sold_out");
    const deskAsks = await mobileCreate(frontDesk.accessToken, { overbook: true });
    expect(deskAsks.status).toBe(403);
    expect(deskAsks.body.error.code).toBe("forbidden");
    const unasked = await mobileCreate(manager.accessToken);
    expect(unasked.status).toBe(409);
    expect(unasked.body.error.code).toBe("sold_out");

    const asked = await mobileCreate(manager.accessToken, { overbook: true });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({
      overbooked: true,
      overbookedNights: [{ date: "2027-09-01", roomTypeId: suite.id, roomTypeCode: "SUITE", rooms: 1 }],
    });
    expect(await overbookingOf(asked.body.id)).toMatchObject({ overbooked: true });
    expect(await mailTo(manager.email, new RegExp(`^Overbooking: ${asked.body.code} `))).toHaveLength(1);
  });

  it("Connect: a staff session gets sold_out without the permission; created and flagged with it and the flag", async () => {
    const reservations = createClient(ReservationService, connect);
    expect(
      await failure(reservations.createReservation(createRequest(false), { headers: bearer(frontDesk.accessToken) })),
    ).toEqual({ code: Code.FailedPrecondition, appCode: "sold_out" });
    expect(
      await failure(reservations.createReservation(createRequest(true), { headers: bearer(frontDesk.accessToken) })),
    ).toEqual({ code: Code.PermissionDenied, appCode: "forbidden" });
    expect(
      await failure(reservations.createReservation(createRequest(false), { headers: bearer(manager.accessToken) })),
    ).toEqual({ code: Code.FailedPrecondition, appCode: "sold_out" });
    const { reservation } = await reservations.createReservation(createRequest(true), {
      headers: bearer(manager.accessToken),
    });
    expect(reservation!.overbooked).toBe(true);
    expect(reservation!.overbookedNights.map((n) => [n.date, n.roomTypeCode, n.rooms])).toEqual([
      ["2027-09-01", "SUITE", 1],
    ]);
  });

  it("gRPC: an internal client gets sold_out without the permission; created and flagged with it and the flag", async () => {
    const reservations = createClient(ReservationService, grpc);
    expect(
      await failure(reservations.createReservation(createRequest(false), { headers: bearer(pms.accessToken) })),
    ).toEqual({ code: Code.FailedPrecondition, appCode: "sold_out" });
    expect(
      await failure(reservations.createReservation(createRequest(true), { headers: bearer(pms.accessToken) })),
    ).toEqual({ code: Code.PermissionDenied, appCode: "forbidden" });
    expect(
      await failure(reservations.createReservation(createRequest(false), { headers: bearer(pmsAdmin.accessToken) })),
    ).toEqual({ code: Code.FailedPrecondition, appCode: "sold_out" });
    const { reservation } = await reservations.createReservation(createRequest(true), {
      headers: bearer(pmsAdmin.accessToken),
    });
    expect(reservation!.overbooked).toBe(true);
    // 4 rooms, 4 channel bookings and 3 accepted overbookings (REST, Connect, gRPC)
    expect((await suiteDays(full.arrivalDate, full.departureDate))[0]).toMatchObject({
      total: 4,
      sold: 7,
      available: 0,
      overbooked: 3,
    });
  });
});

describe("more rooms", () => {
  it("a room added to the type covers a night short (runs last: the type keeps 5 rooms)", async () => {
    const night = { arrival: "2027-11-01", departure: "2027-11-02" };
    for (let i = 1; i <= 4; i++) await sendEvent(booking(`RM-${i}`, night.arrival, night.departure, 1));
    const short = (await sendEvent(booking("RM-5", night.arrival, night.departure, 1))).reservationId as string;
    expect((await overbookingOf(short)).overbooked).toBe(true);
    await app.services.inventory.createRoom(property.id, { number: "505", roomTypeId: suite.id });
    expect(await overbookingOf(short)).toEqual({ overbooked: false, nights: [] });
    expect((await suiteDays(night.arrival, night.departure))[0]).toMatchObject({
      total: 5,
      sold: 5,
      available: 0,
      overbooked: 0,
    });
  });
  it("every night's overbooked count is the sum of the rooms its stays are short", async () => {
    const { rows } = await app.db.pool.query<{ date: string; excess: number; short: number }>(
      `select to_char(d.date, 'YYYY-MM-DD') as date, greatest(0, d.sold + d.blocked + d.out_of_order - d.total) as excess,
              coalesce((select sum(o.rooms) from room_type_overbookings o
                         where o.property_id = d.property_id and o.room_type_id = d.room_type_id and o.date = d.date), 0)::int as short
         from room_type_days d where d.property_id = $1 order by d.date`,
      [property.id],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.excess !== r.short)).toEqual([]);
  });
});
