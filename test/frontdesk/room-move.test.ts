import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// ReservationService.MoveRoom: an in-house guest changes rooms from the business date on. ReservationService has no
// REST routes; the REST face reads the outcome (mobile reservation, partner availability).

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const transportOf = (face: "connect" | "grpc"): Transport =>
  face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });

async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2026-12-02" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const ste = await inv.createRoomType(p.id, { code: "STE", name: "Suite", maxOccupancy: 4 });
  const rooms: Record<string, string> = {};
  for (const [n, t] of [
    ["201", dbl.id],
    ["202", dbl.id],
    ["203", dbl.id],
    ["401", ste.id],
  ] as const)
    rooms[n] = (await inv.createRoom(p.id, { number: n, roomTypeId: t })).id;
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Bar",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, ste.id],
  });
  for (const [rt, amountMinor] of [
    [dbl.id, 10_000n],
    [ste.id, 30_000n],
  ] as const)
    await inv.setPrices(p.id, {
      ratePlanId: bar.id,
      roomTypeId: rt,
      from: "2026-12-01",
      to: "2027-01-31",
      amountMinor,
    });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const partner = await createTestClient(app, {
    propertyCodes: [p.code],
    scopes: ["availability.read"],
    approved: true,
  });
  return { p, dbl: dbl.id, bar: bar.id, rooms, manager, partner };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

async function soldByType(h: Hotel): Promise<Record<string, number[]>> {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${h.p.code}/availability?from=2026-12-02&to=2026-12-05`, {
    headers: bearer(h.partner.accessToken),
  });
  const body = (await res.json()) as { roomTypes: { code: string; days: { sold: number }[] }[] };
  return Object.fromEntries(body.roomTypes.map((rt) => [rt.code, rt.days.map((d) => d.sold)]));
}

async function failure(work: Promise<unknown>): Promise<{ error: string | null; message: string }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { error: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

describe("MoveRoom", { timeout: 60_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`moves an in-house guest from the business date on, to another type with the rate kept or repriced (${face})`, async () => {
      const h = await hotel();
      const staff = { headers: bearer(h.manager.accessToken) };
      const reservations = createClient(ReservationService, transportOf(face));
      const { reservation } = await reservations.createReservation(
        {
          propertyCode: h.p.code,
          source: ReservationSource.PANEL,
          holderName: "Elif Kaya",
          arrivalDate: "2026-12-02",
          departureDate: "2026-12-05",
          rooms: [{ roomTypeId: h.dbl, ratePlanId: h.bar, adults: 2, children: 0 }],
        },
        staff,
      );
      const id = reservation!.id;
      const line = reservation!.rooms[0]!.id;
      await reservations.checkInRoomLine(
        { propertyCode: h.p.code, reservationId: id, reservationRoomId: line, roomId: h.rooms["201"]! },
        staff,
      );
      const move = (roomId: string, reprice = false) =>
        reservations.moveRoom({ propertyCode: "", reservationId: id, reservationRoomId: line, roomId, reprice }, staff);

      // the same type: only the room changes; the room left is DIRTY
      const same = await move(h.rooms["202"]!);
      expect(same.reservation!.rooms[0]).toMatchObject({ roomNumber: "202", roomTypeCode: "DBL", totalMinor: 30_000n });
      expect((await app.services.inventory.listRooms(h.p.id)).find((r) => r.number === "201")!.status).toBe("DIRTY");
      expect(await soldByType(h)).toEqual({ DBL: [1, 1, 1], STE: [0, 0, 0] });

      // next day, to the suite at the suite's price: the remaining nights move in inventory
      await app.services.nightAudit.run(h.p.id, "test", { expectedBusinessDate: "2026-12-02" });
      const since = new Date();
      const up = await move(h.rooms["401"]!, true);
      expect(up.reservation!.rooms[0]).toMatchObject({
        roomNumber: "401",
        roomTypeCode: "STE",
        nightlyMinor: [10_000n, 30_000n, 30_000n],
        totalMinor: 70_000n,
      });
      expect(up.reservation!.totalMinor).toBe(70_000n);
      expect(await soldByType(h)).toEqual({ DBL: [1, 0, 0], STE: [0, 1, 1] });
      const { rows } = await app.deps.db.pool.query<{ type: string; data: Record<string, unknown> }>(
        "select type, data from domain_events where property_id = $1 and occurred_at >= $2 order by created_at, ctid",
        [h.p.id, since],
      );
      expect(rows.map((e) => e.type)).toEqual(["reservation.updated", "availability.changed"]);
      expect(rows[1]!.data).toMatchObject({ from: "2026-12-03", to: "2026-12-05", roomTypes: ["DBL", "STE"] });

      // back to a double with the price kept (no reprice)
      const back = await move(h.rooms["203"]!);
      expect(back.reservation!.rooms[0]).toMatchObject({ roomNumber: "203", totalMinor: 70_000n });
      expect(await soldByType(h)).toEqual({ DBL: [1, 1, 1], STE: [0, 0, 0] });

      // the mobile app reads the new room over REST
      const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${id}`, {
        headers: bearer(h.manager.accessToken),
      });
      expect(
        ((await res.json()) as { reservation: { rooms: { roomNumber: string }[] } }).reservation.rooms[0]!.roomNumber,
      ).toBe("203");
    });

    it(`refuses what a front desk must not do, naming why (${face})`, async () => {
      const h = await hotel();
      const other = await hotel();
      const staff = { headers: bearer(h.manager.accessToken) };
      const reservations = createClient(ReservationService, transportOf(face));
      const book = async (arrivalDate: string, departureDate: string, roomId?: string) =>
        (
          await reservations.createReservation(
            {
              propertyCode: h.p.code,
              source: ReservationSource.PANEL,
              holderName: "Can Aydin",
              arrivalDate,
              departureDate,
              rooms: [{ roomTypeId: h.dbl, ratePlanId: h.bar, adults: 1, children: 0, ...(roomId ? { roomId } : {}) }],
            },
            staff,
          )
        ).reservation!;
      const guest = await book("2026-12-02", "2026-12-05");
      const line = guest.rooms[0]!.id;
      const move = (roomId: string, token = h.manager.accessToken) =>
        reservations.moveRoom(
          { propertyCode: h.p.code, reservationId: guest.id, reservationRoomId: line, roomId },
          { headers: bearer(token) },
        );
      // not in house yet
      expect(await failure(move(h.rooms["202"]!))).toMatchObject({ error: "invalid_transition" });
      await reservations.checkInRoomLine(
        { propertyCode: h.p.code, reservationId: guest.id, reservationRoomId: line, roomId: h.rooms["201"]! },
        staff,
      );
      // a room another stay holds on one of the nights
      const next = await book("2026-12-04", "2026-12-06", h.rooms["202"]!);
      const held = await failure(move(h.rooms["202"]!));
      expect(held.error).toBe("conflict");
      expect(held.message).toContain(next.code);
      // a room planned out of order on one of the nights
      await app.services.inventory.createOutOfOrderPeriod(h.p.id, {
        roomId: h.rooms["203"]!,
        from: "2026-12-03",
        to: "2026-12-04",
      });
      expect(await failure(move(h.rooms["203"]!))).toMatchObject({ error: "conflict" });
      // a dirty room, the guest's own room, a malformed id, another property's room
      await app.services.inventory.setRoomStatus(h.p.id, { roomId: h.rooms["401"]!, status: "DIRTY" });
      expect((await failure(move(h.rooms["401"]!))).message).toContain("DIRTY");
      expect(await failure(move(h.rooms["201"]!))).toMatchObject({ error: "validation_failed" });
      expect(await failure(move("room-401"))).toMatchObject({ error: "not_found" });
      expect(await failure(move(other.rooms["202"]!))).toMatchObject({ error: "not_found" });
      // another property's reservation, and a viewer
      const otherStaff = await createStaffSession(app, { propertyCode: other.p.code, role: "manager" });
      expect(
        await failure(
          reservations.moveRoom(
            { propertyCode: "", reservationId: guest.id, reservationRoomId: line, roomId: other.rooms["202"]! },
            { headers: bearer(otherStaff.accessToken) },
          ),
        ),
      ).toMatchObject({ error: "not_found" });
      const viewer = await createStaffSession(app, { propertyCode: h.p.code, role: "viewer" });
      expect(await failure(move(h.rooms["401"]!, viewer.accessToken))).toMatchObject({ error: "forbidden" });
      // nothing moved
      expect(await soldByType(h)).toEqual({ DBL: [1, 1, 2], STE: [0, 0, 0] });
    });
  }
});
