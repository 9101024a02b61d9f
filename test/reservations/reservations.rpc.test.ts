import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BoardType, InventoryService, RoomStatus } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import {
  ReservationService,
  ReservationSource,
  ReservationStatus,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let inventory: Client<typeof InventoryService>;
let reservations: Client<typeof ReservationService>;
const clock = new ManualClock("2026-11-22T09:00:00.000Z");
beforeAll(async () => {
  app = await startTestApp({ clock });
  const transport = createGrpcTransport({ baseUrl: app.baseUrl });
  inventory = createClient(InventoryService, transport);
  reservations = createClient(ReservationService, transport);
});
afterAll(async () => {
  await app?.close();
});

async function failure(work: Promise<unknown>): Promise<{ code: Code; appCode: string | null }> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.code, appCode: err.metadata.get("x-error-code") };
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** A property with inventory set up over gRPC by an internal client (scope admin). */
async function hotel(rooms = 2) {
  const p = await createTestProperty(app, { businessDate: "2026-11-22" });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["admin", "reservations.read", "reservations.write", "availability.read"],
  });
  const h = { headers: bearer(internal.accessToken) };
  const { roomType } = await inventory.createRoomType(
    { propertyCode: p.code, code: "DBL", name: "Double", maxOccupancy: 2 },
    h,
  );
  const roomIds: string[] = [];
  for (let i = 1; i <= rooms; i++)
    roomIds.push(
      (await inventory.createRoom({ propertyCode: p.code, number: `20${i}`, roomTypeId: roomType!.id }, h)).room!.id,
    );
  const { ratePlan } = await inventory.createRatePlan(
    {
      propertyCode: p.code,
      code: "BB",
      name: "B&B",
      boardType: BoardType.BED_AND_BREAKFAST,
      roomTypeIds: [roomType!.id],
    },
    h,
  );
  await inventory.setPrices(
    {
      propertyCode: p.code,
      ratePlanId: ratePlan!.id,
      roomTypeId: roomType!.id,
      from: "2026-11-22",
      to: "2027-01-01",
      amountMinor: 150_000n,
    },
    h,
  );
  return { p, h, roomTypeId: roomType!.id, ratePlanId: ratePlan!.id, roomIds };
}

function createRequest(
  x: Awaited<ReturnType<typeof hotel>>,
  over: { arrivalDate?: string; departureDate?: string; externalReference?: string } = {},
) {
  return {
    propertyCode: x.p.code,
    source: ReservationSource.PANEL,
    holderName: "Mehmet Demir",
    arrivalDate: over.arrivalDate ?? "2026-11-22",
    departureDate: over.departureDate ?? "2026-11-24",
    rooms: [{ roomTypeId: x.roomTypeId, ratePlanId: x.ratePlanId, adults: 2, children: 0 }],
    ...(over.externalReference !== undefined
      ? { externalReference: over.externalReference, channel: "booking.com" }
      : {}),
  };
}

describe("InventoryService and ReservationService over gRPC", () => {
  it("runs a stay end to end for an internal client", async () => {
    const x = await hotel();
    const { roomTypes } = await inventory.listRoomTypes({ propertyCode: x.p.code }, x.h);
    expect(roomTypes.map((r) => ({ code: r.code, roomCount: r.roomCount }))).toEqual([{ code: "DBL", roomCount: 2 }]);
    const created = await reservations.createReservation(createRequest(x), x.h);
    expect(created.created).toBe(true);
    const r = created.reservation!;
    expect(r).toMatchObject({
      status: ReservationStatus.GUARANTEED,
      source: ReservationSource.PANEL,
      totalMinor: 300_000n,
      currency: "TRY",
      amountScale: 100,
      changeSeq: 1n,
    });
    expect(r.code).toMatch(/^R\d+$/);
    const avail = await inventory.getAvailability(
      { propertyCode: x.p.code, from: "2026-11-22", to: "2026-11-25" },
      x.h,
    );
    expect(avail.roomTypes[0]!.days.map((d) => d.available)).toEqual([1, 1, 2]);

    const lineId = r.rooms[0]!.id;
    const checkedIn = await reservations.checkInRoomLine(
      { propertyCode: x.p.code, reservationId: r.id, reservationRoomId: lineId, roomId: x.roomIds[0]! },
      x.h,
    );
    expect(checkedIn.reservation!.status).toBe(ReservationStatus.IN_HOUSE);
    expect(checkedIn.reservation!.rooms[0]!.roomNumber).toBe("201");
    const out = await reservations.checkOutRoomLine(
      { propertyCode: x.p.code, reservationId: r.id, reservationRoomId: lineId },
      x.h,
    );
    expect(out.reservation!.status).toBe(ReservationStatus.CHECKED_OUT);
    const { rooms } = await inventory.listRooms({ propertyCode: x.p.code }, x.h);
    expect(rooms.find((room) => room.id === x.roomIds[0])!.status).toBe(RoomStatus.DIRTY);

    const listed = await reservations.listReservations({ propertyCode: x.p.code, limit: 10 }, x.h);
    expect(listed.reservations.map((l) => [l.id, l.changeSeq])).toEqual([[r.id, 3n]]);
    // Any state moves to CANCELLED (the spec's state table), a checked-out stay too; a cancelled one stays final.
    expect(
      (await reservations.cancelReservation({ propertyCode: x.p.code, reservationId: r.id }, x.h)).reservation!.status,
    ).toBe(ReservationStatus.CANCELLED);
    expect(await failure(reservations.cancelReservation({ propertyCode: x.p.code, reservationId: r.id }, x.h))).toEqual(
      { code: Code.FailedPrecondition, appCode: "invalid_transition" },
    );
  });

  it("answers the last room to one caller and sold_out (409) to the rest", async () => {
    const x = await hotel(1);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => reservations.createReservation(createRequest(x), x.h)),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results)
      if (r.status === "rejected") expect((r.reason as ConnectError).metadata.get("x-error-code")).toBe("sold_out");
  });

  it("replays a channel booking instead of creating it twice", async () => {
    const x = await hotel();
    const first = await reservations.createReservation(createRequest(x, { externalReference: "BDC-77" }), x.h);
    const again = await reservations.createReservation(createRequest(x, { externalReference: "BDC-77" }), x.h);
    expect(again.created).toBe(false);
    expect(again.reservation!.id).toBe(first.reservation!.id);
  });

  it("scopes every call to the caller's properties and permissions", async () => {
    const a = await hotel();
    const b = await hotel();
    const { reservation } = await reservations.createReservation(createRequest(a), a.h);
    // b's client cannot see a's property nor a's reservation through its own property.
    expect(
      await failure(reservations.getReservation({ propertyCode: a.p.code, reservationId: reservation!.id }, b.h)),
    ).toMatchObject({ code: Code.NotFound });
    expect(
      await failure(reservations.getReservation({ propertyCode: b.p.code, reservationId: reservation!.id }, b.h)),
    ).toMatchObject({ code: Code.NotFound });
    expect(await failure(inventory.listRooms({ propertyCode: a.p.code }, b.h))).toMatchObject({ code: Code.NotFound });

    const frontDesk = await createStaffSession(app, { propertyCode: a.p.code, role: "front_desk" });
    const staff = { headers: bearer(frontDesk.accessToken) };
    const got = await reservations.getReservation({ propertyCode: a.p.code, reservationId: reservation!.id }, staff);
    expect(got.reservation!.holderName).toBe("Mehmet Demir");
    expect(await failure(reservations.listReservations({ propertyCode: b.p.code }, staff))).toMatchObject({
      code: Code.NotFound,
    });
    // Staff cannot write inventory (internal clients only), and a viewer cannot book.
    expect(
      await failure(
        inventory.createRoomType({ propertyCode: a.p.code, code: "STE", name: "Suite", maxOccupancy: 3 }, staff),
      ),
    ).toMatchObject({ code: Code.PermissionDenied });
    const viewer = await createStaffSession(app, { propertyCode: a.p.code, role: "viewer" });
    expect(
      await failure(reservations.createReservation(createRequest(a), { headers: bearer(viewer.accessToken) })),
    ).toMatchObject({ code: Code.PermissionDenied });
    // Without a token nothing is answered.
    expect(
      await failure(reservations.getReservation({ propertyCode: a.p.code, reservationId: reservation!.id })),
    ).toMatchObject({ code: Code.Unauthenticated });
    // A front-desk user may not change the price (no reservations.override_price).
    const cheap = createRequest(a, { arrivalDate: "2026-12-01", departureDate: "2026-12-02" });
    expect(await failure(reservations.createReservation({ ...cheap, totalMinor: 1n }, staff))).toMatchObject({
      appCode: "validation_failed",
    });
  });

  it("rejects bad input with invalid_argument", async () => {
    const x = await hotel();
    expect(
      await failure(reservations.createReservation({ ...createRequest(x), arrivalDate: "22.11.2026" }, x.h)),
    ).toEqual({ code: Code.InvalidArgument, appCode: "invalid_argument" });
    expect(await failure(reservations.createReservation({ ...createRequest(x), rooms: [] }, x.h))).toMatchObject({
      appCode: "invalid_argument",
    });
    expect(
      await failure(
        inventory.setRoomStatus(
          { propertyCode: x.p.code, roomId: x.roomIds[0]!, status: RoomStatus.OUT_OF_ORDER },
          x.h,
        ),
      ),
    ).toMatchObject({ appCode: "invalid_argument" });
    expect(
      await failure(reservations.getReservation({ propertyCode: x.p.code, reservationId: "nope" }, x.h)),
    ).toMatchObject({ code: Code.NotFound });
  });
});
