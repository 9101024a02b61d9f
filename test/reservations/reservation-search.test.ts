// The front desk's search (ListReservations `query`, what the panel's Reservations page sends): a code or part of
// the holder's name finds a reservation whatever face made it (mobile REST, Connect, a channel's booking through
// the partner API), on Connect and gRPC alike, only in the caller's property; a search too long is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { BoardType, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { until } from "../helpers/service-process.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const NIGHT = 150_000n;
const day = (n: number): string => new Date(Date.UTC(2027, 0, 1 + n)).toISOString().slice(0, 10);
const rpc = (face: "connect" | "grpc") =>
  createClient(
    ReservationService,
    face === "grpc"
      ? createGrpcTransport({ baseUrl: app.baseUrl })
      : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  );

/** A property with one priced room type, a partner mapped to it and a manager session. */
async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2026-12-01" });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["admin", "reservations.read", "reservations.write", "availability.read"],
  });
  const h = { headers: bearer(internal.accessToken) };
  const inventory = createClient(InventoryService, createGrpcTransport({ baseUrl: app.baseUrl }));
  const { roomType } = await inventory.createRoomType(
    { propertyCode: p.code, code: "DBL", name: "Double", maxOccupancy: 2 },
    h,
  );
  for (let i = 1; i <= 5; i++)
    await inventory.createRoom({ propertyCode: p.code, number: `${100 + i}`, roomTypeId: roomType!.id }, h);
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
      from: day(0),
      to: day(60),
      amountMinor: NIGHT,
    },
    h,
  );
  for (const [kind, code] of [
    ["room_type", "DBL"],
    ["rate_plan", "BB"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: p.code, provider: "acme", kind, code, externalCode: code });
  const partner = await createTestClient(app, {
    provider: "acme",
    propertyCodes: [p.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const staff = { headers: bearer(manager.accessToken) };
  return { p, roomTypeId: roomType!.id, ratePlanId: ratePlan!.id, partner, manager, staff };
}

describe("searching reservations by code or name", () => {
  it(
    "finds bookings of every face on Connect and gRPC, only in the session's property",
    { timeout: 60_000 },
    async () => {
      const a = await hotel();
      const b = await hotel();
      // mobile REST
      const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
        method: "POST",
        headers: { ...bearer(a.manager.accessToken), "content-type": "application/json", "idempotency-key": newId() },
        body: JSON.stringify({
          holderName: "Ayşe Yılmaz",
          arrivalDate: day(1),
          departureDate: day(3),
          roomTypeId: a.roomTypeId,
          ratePlanId: a.ratePlanId,
          adults: 2,
          totalMinor: Number(NIGHT * 2n),
          currency: "TRY",
        }),
      });
      expect(res.status).toBe(201);
      const mobileCode = ((await res.json()) as { code: string }).code;
      // Connect, as the panel books
      const panel = await rpc("connect").createReservation(
        {
          source: ReservationSource.PANEL,
          holderName: "Mehmet Demir",
          arrivalDate: day(2),
          departureDate: day(3),
          rooms: [{ roomTypeId: a.roomTypeId, ratePlanId: a.ratePlanId, adults: 1, children: 0 }],
        },
        a.staff,
      );
      // a channel's booking through the partner API, applied by the worker
      const sent = await fetch(`${app.baseUrl}/api/v1/properties/${a.p.code}/reservation-events`, {
        method: "POST",
        headers: { ...bearer(a.partner.accessToken), "content-type": "application/json", "idempotency-key": newId() },
        body: JSON.stringify({
          eventType: "NEW",
          externalReference: `BK-${a.p.code}`,
          arrivalDate: day(4),
          departureDate: day(5),
          currency: "TRY",
          holder: { name: "Hans Müller" },
          channel: "Booking.com",
          rooms: [{ roomTypeCode: "DBL", ratePlanCode: "BB", adults: 2, children: 0, amountMinor: Number(NIGHT) }],
          totalMinor: Number(NIGHT),
        }),
      });
      expect(sent.status).toBe(202);
      await sent.arrayBuffer();
      // the other property has a guest of the same name
      await rpc("grpc").createReservation(
        {
          source: ReservationSource.PANEL,
          holderName: "Mehmet Demir",
          arrivalDate: day(2),
          departureDate: day(3),
          rooms: [{ roomTypeId: b.roomTypeId, ratePlanId: b.ratePlanId, adults: 1, children: 0 }],
        },
        b.staff,
      );

      for (const face of ["connect", "grpc"] as const) {
        const search = async (query: string) =>
          (await rpc(face).listReservations({ query, limit: 500 }, a.staff)).reservations.map((r) => r.holderName);
        await until(async () => (await search("müller")).length === 1, 10_000, "the channel booking");
        expect(await search("hans MÜLLER")).toEqual(["Hans Müller"]);
        expect(await search("  ayşe ")).toEqual(["Ayşe Yılmaz"]);
        expect(await search(mobileCode.toLowerCase())).toEqual(["Ayşe Yılmaz"]);
        expect(await search(panel.reservation!.code)).toEqual(["Mehmet Demir"]);
        expect(await search("demir")).toEqual(["Mehmet Demir"]);
        expect(await search("nobody")).toEqual([]);
        // a code is matched whole: a part of it finds nothing, as a name's part of another guest would not
        expect(await search(mobileCode.slice(0, 4))).toEqual([]);
        expect((await search("")).length).toBe(3);
        // combined with the other filters
        const inHouse = await rpc(face).listReservations({ query: "demir", arrivalFrom: day(3) }, a.staff);
        expect(inHouse.reservations).toEqual([]);

        const tooLong = await rpc(face)
          .listReservations({ query: "x".repeat(101) }, a.staff)
          .catch((e: unknown) => ConnectError.from(e));
        expect(tooLong).toBeInstanceOf(ConnectError);
        expect((tooLong as ConnectError).code).toBe(Code.InvalidArgument);
        expect((tooLong as ConnectError).rawMessage).toContain("query");
      }
    },
  );
});
