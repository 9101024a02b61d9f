import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  ReservationService,
  ReservationSource,
  ReservationStatus,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { newId } from "../../src/lib/ids.ts";

// Fault 1 of the front-desk issue: a stay 12-02 -> 12-04 booked on business date 12-02, checked in and out the same
// day, kept both nights sold. A check-out before the departure date ends the stay on the business date.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

type Face = "rest" | "connect" | "grpc";
const transports: Record<Face, () => Transport> = {
  // REST has no check-in / check-out route: the REST case books and reads over REST, the desk works over Connect
  rest: () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  connect: () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  grpc: () => createGrpcTransport({ baseUrl: app.baseUrl }),
};

/** A hotel on business date 2026-12-02 with two double rooms, a manager, an internal client and a partner. */
async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2026-12-02" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const rooms = [];
  for (const n of ["201", "202"]) rooms.push(await inv.createRoom(p.id, { number: n, roomTypeId: dbl.id }));
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inv.setPrices(p.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2026-12-01",
    to: "2027-01-31",
    amountMinor: 10_000n,
  });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const partner = await createTestClient(app, {
    propertyCodes: [p.code],
    scopes: ["availability.read", "ari.read"],
    approved: true,
  });
  return { p, roomTypeId: dbl.id, ratePlanId: bar.id, rooms, manager, partner };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

async function restJson<T>(path: string, token: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${app.baseUrl}${path}`, {
    ...init,
    headers: { ...bearer(token), "content-type": "application/json", ...(init.headers ?? {}) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Sold per day of [12-02, 12-05) as the partner REST availability shows it. */
async function soldByDay(h: Hotel): Promise<number[]> {
  const { status, body } = await restJson<{ roomTypes: { days: { sold: number }[] }[] }>(
    `/api/v1/properties/${h.p.code}/availability?from=2026-12-02&to=2026-12-05`,
    h.partner.accessToken,
  );
  expect(status).toBe(200);
  return body.roomTypes[0]!.days.map((d) => d.sold);
}

async function book(face: Face, h: Hotel, reservations: Client<typeof ReservationService>, staff: object) {
  if (face === "rest") {
    const { status, body } = await restJson<{ id: string; rooms: { id: string }[] }>(
      "/api/mobile/v1/reservations",
      h.manager.accessToken,
      {
        method: "POST",
        headers: { "idempotency-key": newId() },
        body: JSON.stringify({
          holderName: "Elif Kaya",
          arrivalDate: "2026-12-02",
          departureDate: "2026-12-04",
          roomTypeId: h.roomTypeId,
          ratePlanId: h.ratePlanId,
          adults: 2,
          totalMinor: 20_000,
          currency: "TRY",
        }),
      },
    );
    expect(status).toBe(201);
    return { id: body.id, lineId: body.rooms[0]!.id };
  }
  const { reservation } = await reservations.createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Elif Kaya",
      arrivalDate: "2026-12-02",
      departureDate: "2026-12-04",
      rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 2, children: 0 }],
    },
    staff,
  );
  return { id: reservation!.id, lineId: reservation!.rooms[0]!.id };
}

describe("an early check-out gives the rest of the stay back to inventory", { timeout: 60_000 }, () => {
  for (const face of ["rest", "connect", "grpc"] as const) {
    it(`a same-day check-out is a day use: both nights back, departure moved, webhooks and ARI say so (${face})`, async () => {
      const h = await hotel();
      const staff = { headers: bearer(h.manager.accessToken) };
      const reservations = createClient(ReservationService, transports[face]());
      const r = await book(face, h, reservations, staff);
      expect(await soldByDay(h)).toEqual([1, 1, 0]);
      const since = new Date();

      await reservations.checkInRoomLine(
        { propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId, roomId: h.rooms[0]!.id },
        staff,
      );
      const out = await reservations.checkOutRoomLine(
        { propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId },
        staff,
      );
      expect(out.reservation).toMatchObject({
        status: ReservationStatus.CHECKED_OUT,
        arrivalDate: "2026-12-02",
        departureDate: "2026-12-02",
      });
      expect(await soldByDay(h)).toEqual([0, 0, 0]);
      if (face === "rest") {
        const got = await restJson<{ reservation: unknown }>(
          `/api/mobile/v1/reservations/${r.id}`,
          h.manager.accessToken,
        );
        expect(got.body.reservation).toMatchObject({ status: "CHECKED_OUT", departureDate: "2026-12-02" });
      }

      // the events webhooks deliver: the reservation's new departure, and the two nights back
      const { rows } = await app.deps.db.pool.query<{ type: string; data: Record<string, unknown> }>(
        "select type, data from domain_events where property_id = $1 and occurred_at >= $2 order by created_at, ctid",
        [h.p.id, since],
      );
      const updated = rows.filter((e) => e.type === "reservation.updated").at(-1);
      expect(updated?.data).toMatchObject({ id: r.id, status: "CHECKED_OUT", departureDate: "2026-12-02" });
      expect(rows.filter((e) => e.type === "availability.changed").map((e) => e.data)).toEqual([
        { from: "2026-12-02", to: "2026-12-04", toExclusive: true, roomTypes: ["DBL"], reason: "reservation" },
      ]);
      // the partners' ARI feed names the same dates
      const feed = await restJson<{ data: unknown[] }>(
        `/api/v1/properties/${h.p.code}/ari/changes?limit=500`,
        h.partner.accessToken,
      );
      expect(feed.status).toBe(200);
      expect(feed.body.data.at(-1)).toMatchObject({ reason: "reservation", from: "2026-12-02", to: "2026-12-04" });

      // the room is sellable again for tonight: another guest can book and take the same room
      const again = await reservations.createReservation(
        {
          propertyCode: h.p.code,
          source: ReservationSource.PANEL,
          holderName: "Can Aydin",
          arrivalDate: "2026-12-02",
          departureDate: "2026-12-04",
          rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 1, children: 0 }],
        },
        staff,
      );
      expect(again.reservation!.status).toBe(ReservationStatus.GUARANTEED);
      // a later cancellation of the checked-out stay gives nothing back twice
      await reservations.cancelReservation({ propertyCode: h.p.code, reservationId: r.id }, staff);
      expect(await soldByDay(h)).toEqual([1, 1, 0]);
    });
  }

  it("a check-out on the second day gives back the last night only (gRPC)", async () => {
    const h = await hotel();
    const staff = { headers: bearer(h.manager.accessToken) };
    const reservations = createClient(ReservationService, transports.grpc());
    const r = await book("grpc", h, reservations, staff);
    await reservations.checkInRoomLine(
      { propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId, roomId: h.rooms[0]!.id },
      staff,
    );
    await app.services.nightAudit.run(h.p.id, "test", { expectedBusinessDate: "2026-12-02" });
    const out = await reservations.checkOutRoomLine(
      { propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId },
      staff,
    );
    expect(out.reservation!.departureDate).toBe("2026-12-03");
    expect(await soldByDay(h)).toEqual([1, 0, 0]);
  });
});

describe("a late check-out past the departure date", { timeout: 60_000 }, () => {
  /** A stay 12-02 -> 12-03 in room 201, in house, with the business date moved on to 12-04 (the guest stayed on). */
  async function overstay(h: Hotel, reservations: Client<typeof ReservationService>, staff: object) {
    const { reservation } = await reservations.createReservation(
      {
        propertyCode: h.p.code,
        source: ReservationSource.PANEL,
        holderName: "Elif Kaya",
        arrivalDate: "2026-12-02",
        departureDate: "2026-12-03",
        rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 2, children: 0 }],
      },
      staff,
    );
    const lineId = reservation!.rooms[0]!.id;
    await reservations.checkInRoomLine(
      { propertyCode: h.p.code, reservationId: reservation!.id, reservationRoomId: lineId, roomId: h.rooms[0]!.id },
      staff,
    );
    // the night audit refuses to run past a departure not checked out: move the date as a stuck stay would find it
    await app.deps.db.pool.query("update properties set business_date = '2026-12-04' where id = $1", [h.p.id]);
    return { id: reservation!.id, lineId };
  }

  it("takes the nights stayed beyond the departure when the room is free (Connect)", async () => {
    const h = await hotel();
    const staff = { headers: bearer(h.manager.accessToken) };
    const reservations = createClient(ReservationService, transports.connect());
    const r = await overstay(h, reservations, staff);
    const out = await reservations.checkOutRoomLine(
      { propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId },
      staff,
    );
    expect(out.reservation!.departureDate).toBe("2026-12-04");
    expect(await soldByDay(h)).toEqual([1, 1, 0]);
  });

  it("is refused with 409 naming the reservation that holds the room (REST read, gRPC desk)", async () => {
    const h = await hotel();
    const staff = { headers: bearer(h.manager.accessToken) };
    const reservations = createClient(ReservationService, transports.grpc());
    // the next guest is booked into room 201 from 12-03 (booked while the business date was 12-02)
    const { reservation: next } = await reservations.createReservation(
      {
        propertyCode: h.p.code,
        source: ReservationSource.PANEL,
        holderName: "Can Aydin",
        arrivalDate: "2026-12-03",
        departureDate: "2026-12-05",
        rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 1, children: 0, roomId: h.rooms[0]!.id }],
      },
      staff,
    );
    const r = await overstay(h, reservations, staff);
    const err = await reservations
      .checkOutRoomLine({ propertyCode: h.p.code, reservationId: r.id, reservationRoomId: r.lineId }, staff)
      .then(
        () => undefined,
        (e: unknown) => e as { code: number; rawMessage: string; metadata: Headers },
      );
    expect(err?.metadata.get("x-error-code")).toBe("conflict");
    expect(err?.rawMessage).toContain(next!.code);
    const still = await restJson<{ reservation: unknown }>(
      `/api/mobile/v1/reservations/${r.id}`,
      h.manager.accessToken,
    );
    expect(still.body.reservation).toMatchObject({ status: "IN_HOUSE", departureDate: "2026-12-03" });
  });
});
