import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  ReservationService,
  ReservationSource,
  ReservationStatus,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// A no-show comes after all: ReservationService.ReinstateReservation (Connect, gRPC) and the mobile REST route
// POST /api/mobile/v1/reservations/{id}/reinstate take the stay's nights back when inventory allows.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

type Face = "rest" | "connect" | "grpc";

const transportOf = (face: "connect" | "grpc"): Transport =>
  face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });

async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2026-12-02" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const room = await inv.createRoom(p.id, { number: "201", roomTypeId: dbl.id });
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Bar",
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
    scopes: ["availability.read"],
    approved: true,
  });
  return { p, dbl: dbl.id, bar: bar.id, room: room.id, manager, partner };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

async function sold(h: Hotel): Promise<number[]> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${h.p.code}/availability?from=2026-12-02&to=2026-12-05`, {
    headers: bearer(h.partner.accessToken),
  });
  const body = (await res.json()) as { roomTypes: { days: { sold: number }[] }[] };
  return body.roomTypes[0]!.days.map((d) => d.sold);
}

async function book(h: Hotel, arrivalDate: string, departureDate: string, roomId?: string) {
  const { reservation } = await createClient(ReservationService, transportOf("connect")).createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Deniz Arslan",
      arrivalDate,
      departureDate,
      rooms: [{ roomTypeId: h.dbl, ratePlanId: h.bar, adults: 1, children: 0, ...(roomId ? { roomId } : {}) }],
    },
    { headers: bearer(h.manager.accessToken) },
  );
  return reservation!;
}

/** Reinstates on one face: the reservation's status and room, or the error code and message. */
async function reinstate(
  face: Face,
  h: Hotel,
  reservationId: string,
  token = h.manager.accessToken,
): Promise<{ status?: string; roomId?: string | undefined; error?: string; message?: string; httpStatus?: number }> {
  if (face === "rest") {
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${reservationId}/reinstate`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: "{}",
    });
    const body = (await res.json()) as {
      status?: string;
      rooms?: { roomId?: string }[];
      error?: { code: string; message: string };
    };
    if (!res.ok) return { error: body.error!.code, message: body.error!.message, httpStatus: res.status };
    return { status: body.status!, roomId: body.rooms![0]!.roomId };
  }
  try {
    const { reservation } = await createClient(ReservationService, transportOf(face)).reinstateReservation(
      { propertyCode: "", reservationId },
      { headers: bearer(token) },
    );
    return { status: ReservationStatus[reservation!.status], roomId: reservation!.rooms[0]!.roomId };
  } catch (err) {
    if (err instanceof ConnectError) return { error: err.metadata.get("x-error-code") ?? "", message: err.rawMessage };
    throw err;
  }
}

const audit = (h: Hotel, date: string) => app.services.nightAudit.run(h.p.id, "test", { expectedBusinessDate: date });

describe("ReinstateReservation", { timeout: 60_000 }, () => {
  for (const face of ["rest", "connect", "grpc"] as const) {
    it(`brings a no-show back the next business day when a room is free, else 409 sold_out (${face})`, async () => {
      const h = await hotel();
      const guest = await book(h, "2026-12-02", "2026-12-04", h.room);
      await audit(h, "2026-12-02");
      expect(await sold(h)).toEqual([0, 0, 0]);

      // the only double is sold for tonight meanwhile: nothing changes
      const walkIn = await book(h, "2026-12-03", "2026-12-04");
      expect(await reinstate(face, h, guest.id)).toMatchObject({ error: "sold_out" });
      expect(await sold(h)).toEqual([0, 1, 0]);

      await app.services.reservations.cancel({ propertyId: h.p.id, canOverridePrice: false }, walkIn.id);
      const since = new Date();
      expect(await reinstate(face, h, guest.id)).toEqual({ status: "GUARANTEED", roomId: h.room });
      expect(await sold(h)).toEqual([1, 1, 0]);
      const { rows } = await app.deps.db.pool.query<{ type: string; data: Record<string, unknown> }>(
        "select type, data from domain_events where property_id = $1 and occurred_at >= $2 order by created_at, ctid",
        [h.p.id, since],
      );
      expect(rows.map((e) => e.type)).toEqual(["reservation.updated", "availability.changed"]);
      expect(rows[0]!.data).toMatchObject({ status: "GUARANTEED" });
      expect(rows[1]!.data).toMatchObject({ from: "2026-12-02", to: "2026-12-04", roomTypes: ["DBL"] });

      // the guest checks in on the business date; reinstating again is not a transition
      expect(await reinstate(face, h, guest.id)).toMatchObject({ error: "invalid_transition" });
    });

    it(`refuses a late reinstate, another property, a viewer and a malformed id (${face})`, async () => {
      const h = await hotel();
      const other = await hotel();
      const guest = await book(h, "2026-12-02", "2026-12-06");
      await audit(h, "2026-12-02");
      await audit(h, "2026-12-03");
      const late = await reinstate(face, h, guest.id);
      expect(late).toMatchObject({ error: "conflict" });
      expect(late.message).toContain("2026-12-04");
      if (face === "rest") expect(late.httpStatus).toBe(409);
      expect(await reinstate(face, h, guest.id, other.manager.accessToken)).toMatchObject({ error: "not_found" });
      const viewer = await createStaffSession(app, { propertyCode: h.p.code, role: "viewer" });
      expect(await reinstate(face, h, guest.id, viewer.accessToken)).toMatchObject({ error: "forbidden" });
      const bad = await reinstate(face, h, "not-an-id");
      expect(bad.error).toMatch(/^(invalid_argument|not_found)$/);
      expect(await sold(h)).toEqual([0, 0, 0]);
    });
  }
});
