import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { InventoryService, RoomStatus } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { errorCodes } from "../../src/errors.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// Fault 2 of the front-desk issue: SetRoomStatus OUT_OF_ORDER from 2027-08-05 turned room 201 OUT_OF_ORDER at once
// and check-in to it today was refused. An out-of-order period is a scheduled block of the room on its dates only.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

type Face = "rest" | "connect" | "grpc";
const transportOf = (face: Exclude<Face, "rest">): Transport =>
  face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });

async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2026-12-02" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const rooms = [];
  for (const n of ["201", "202"]) rooms.push(await inv.createRoom(p.id, { number: n, roomTypeId: dbl.id }));
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
    to: "2027-12-31",
    amountMinor: 10_000n,
  });
  const manager = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [p.code],
    scopes: ["admin", "availability.read"],
  });
  return { p, roomTypeId: dbl.id, ratePlanId: bar.id, rooms, manager, internal };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

interface PeriodJson {
  id: string;
  roomId: string;
  roomNumber: string;
  from: string;
  to: string;
  reason: string;
}
interface AnswerBody {
  outOfOrderPeriod?: PeriodJson;
  outOfOrderPeriods?: PeriodJson[];
}
interface Answer {
  status: number;
  /** The error code of our error body (REST) or of x-error-code (Connect, gRPC). */
  error?: string | undefined;
  message?: string | undefined;
  body?: AnswerBody;
}

/** The four period calls on one face, as a staff session of the hotel (REST: the mobile routes). */
function periods(face: Face, token: string) {
  const rest = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers: { ...bearer(token), "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as AnswerBody & { error?: { code: string; message: string } };
    return res.status < 300
      ? { status: res.status, body: json }
      : { status: res.status, error: json.error?.code, message: json.error?.message };
  };
  if (face === "rest")
    return {
      list: (q = "") => rest("GET", `/api/mobile/v1/out-of-order-periods${q === "" ? "" : `?${q}`}`),
      create: (roomId: string, body: object) =>
        rest("POST", `/api/mobile/v1/rooms/${roomId}/out-of-order-periods`, body),
      update: (id: string, body: object) => rest("PATCH", `/api/mobile/v1/out-of-order-periods/${id}`, body),
      remove: (id: string) => rest("DELETE", `/api/mobile/v1/out-of-order-periods/${id}`),
    };
  const client = createClient(InventoryService, transportOf(face));
  const call = async (work: Promise<unknown>): Promise<Answer> => {
    try {
      return { status: 200, body: (await work) as AnswerBody };
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      const appCode = err.metadata.get("x-error-code") ?? "";
      // the HTTP status REST gives the same error code (src/errors.ts maps both from one table)
      const status = errorCodes[appCode as keyof typeof errorCodes] as { http: number; rpc: Code } | undefined;
      expect(status?.rpc).toBe(err.code);
      return { status: status?.http ?? 0, error: appCode, message: err.rawMessage };
    }
  };
  const h = { headers: bearer(token) };
  return {
    list: (q = "") =>
      call(client.listOutOfOrderPeriods({ ...Object.fromEntries(new URLSearchParams(q)), propertyCode: "" }, h)),
    create: (roomId: string, body: object) =>
      call(client.createOutOfOrderPeriod({ propertyCode: "", roomId, ...body }, h)),
    update: (id: string, body: object) =>
      call(client.updateOutOfOrderPeriod({ propertyCode: "", outOfOrderPeriodId: id, ...body }, h)),
    remove: (id: string) => call(client.deleteOutOfOrderPeriod({ propertyCode: "", outOfOrderPeriodId: id }, h)),
  };
}

/** out_of_order per day of [from, to) as GetAvailability reports it. */
async function outOfOrderByDay(h: Hotel, from: string, to: string): Promise<number[]> {
  const [rt] = await app.services.inventory.getAvailability(h.p.id, { from, to });
  return rt!.days.map((d) => d.outOfOrder);
}

describe("a repair planned for the future", { timeout: 60_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`SetRoomStatus OUT_OF_ORDER from a later date leaves the room's status and today's check-in alone (${face})`, async () => {
      const h = await hotel();
      const inventory = createClient(InventoryService, transportOf(face));
      const reservations = createClient(ReservationService, transportOf(face));
      const internal = { headers: bearer(h.internal.accessToken) };
      const set = await inventory.setRoomStatus(
        {
          propertyCode: h.p.code,
          roomId: h.rooms[0]!.id,
          status: RoomStatus.OUT_OF_ORDER,
          outOfOrderFrom: "2027-08-05",
          outOfOrderTo: "2027-08-08",
          reason: "Bathroom renovation",
        },
        internal,
      );
      expect(set.room!.status).toBe(RoomStatus.CLEAN);
      const { rooms } = await inventory.listRooms({ propertyCode: h.p.code }, internal);
      expect(rooms.find((r) => r.number === "201")!.status).toBe(RoomStatus.CLEAN);
      expect(await outOfOrderByDay(h, "2027-08-04", "2027-08-09")).toEqual([0, 1, 1, 1, 0]);

      // tonight's guest checks into room 201
      const staff = { headers: bearer(h.manager.accessToken) };
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
      const inHouse = await reservations.checkInRoomLine(
        {
          propertyCode: h.p.code,
          reservationId: reservation!.id,
          reservationRoomId: reservation!.rooms[0]!.id,
          roomId: h.rooms[0]!.id,
        },
        staff,
      );
      expect(inHouse.reservation!.rooms[0]!.roomNumber).toBe("201");
    });
  }

  for (const face of ["rest", "connect", "grpc"] as const) {
    it(`periods are scheduled, listed, changed and removed; stays cannot use the room on their dates (${face})`, async () => {
      const h = await hotel();
      const api = periods(face, h.manager.accessToken);
      const room = h.rooms[0]!;
      const created = await api.create(room.id, {
        from: "2027-08-05",
        to: "2027-08-08",
        reason: "Bathroom renovation",
      });
      expect(created.status).toBe(face === "rest" ? 201 : 200);
      const period = created.body!.outOfOrderPeriod!;
      expect(period).toMatchObject({ roomId: room.id, roomNumber: "201", from: "2027-08-05", to: "2027-08-08" });
      expect(await outOfOrderByDay(h, "2027-08-04", "2027-08-09")).toEqual([0, 1, 1, 1, 0]);
      expect((await app.services.inventory.listRooms(h.p.id)).find((r) => r.id === room.id)!.status).toBe("CLEAN");

      const listed = await api.list();
      expect(listed.body!.outOfOrderPeriods!.map((p) => p.id)).toEqual([period.id]);
      expect((await api.list(`roomId=${h.rooms[1]!.id}`)).body!.outOfOrderPeriods ?? []).toEqual([]);
      expect((await api.list("from=2027-08-08")).body!.outOfOrderPeriods ?? []).toEqual([]);

      // a stay over those dates cannot be given that room, but another room of the type
      const reservations = createClient(ReservationService, transportOf("grpc"));
      const staff = { headers: bearer(h.manager.accessToken) };
      const { reservation } = await reservations.createReservation(
        {
          propertyCode: h.p.code,
          source: ReservationSource.PANEL,
          holderName: "Can Aydin",
          arrivalDate: "2027-08-06",
          departureDate: "2027-08-07",
          rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 1, children: 0 }],
        },
        staff,
      );
      const line = reservation!.rooms[0]!.id;
      const assign = (roomId: string) =>
        reservations.assignRoom(
          { propertyCode: h.p.code, reservationId: reservation!.id, reservationRoomId: line, roomId },
          staff,
        );
      await expect(assign(room.id)).rejects.toThrow(/Room 201 is out of order from 2027-08-05 to 2027-08-08/);
      await assign(h.rooms[1]!.id);

      // a period over a stay assigned to the room: 409 naming the reservation
      const clash = await api.create(h.rooms[1]!.id, { from: "2027-08-01", to: "2027-08-10" });
      expect(clash).toMatchObject({ status: 409, error: "conflict" });
      expect(clash.message).toContain(reservation!.code);
      // overlapping periods of one room: 409 naming the period
      const twice = await api.create(room.id, { from: "2027-08-07", to: "2027-08-09" });
      expect(twice).toMatchObject({ status: 409, error: "conflict" });
      expect(twice.message).toContain(period.id);

      // moved to later dates: the old dates come back, the new ones go
      const moved = await api.update(period.id, { from: "2027-08-10", to: "2027-08-12", reason: "Postponed" });
      expect(moved.status).toBe(200);
      expect(moved.body!.outOfOrderPeriod).toMatchObject({ from: "2027-08-10", to: "2027-08-12", reason: "Postponed" });
      expect(await outOfOrderByDay(h, "2027-08-05", "2027-08-13")).toEqual([0, 0, 0, 0, 0, 1, 1, 0]);
      await assign(room.id);
      // the stay's dates cannot move onto the period either
      await expect(
        reservations.updateReservation(
          {
            propertyCode: h.p.code,
            reservationId: reservation!.id,
            arrivalDate: "2027-08-09",
            departureDate: "2027-08-11",
          },
          staff,
        ),
      ).rejects.toThrow(`period ${period.id}`);

      const removed = await api.remove(period.id);
      expect(removed.status).toBe(200);
      expect(removed.body!.outOfOrderPeriod ?? undefined).toBeUndefined();
      expect(await outOfOrderByDay(h, "2027-08-10", "2027-08-12")).toEqual([0, 0]);
      expect((await api.list()).body!.outOfOrderPeriods ?? []).toEqual([]);
      expect(await api.remove(period.id)).toMatchObject({ status: 404, error: "not_found" });

      // the changes reached webhooks (availability.changed, reason out_of_order) and the ARI feed
      const { rows } = await app.deps.db.pool.query<{ n: number }>(
        `select count(*)::int as n from domain_events where property_id = $1 and type = 'availability.changed' and data->>'reason' = 'out_of_order'`,
        [h.p.id],
      );
      expect(rows[0]!.n).toBe(3);
    });

    it(`bad input, permissions and property isolation (${face})`, async () => {
      const h = await hotel();
      const other = await hotel();
      const api = periods(face, h.manager.accessToken);
      const room = h.rooms[0]!.id;
      expect(await api.create(room, { from: "05.08.2027", to: "2027-08-08" })).toMatchObject({
        status: 400,
        error: "invalid_argument",
      });
      expect(await api.create(room, { from: "2027-08-08", to: "2027-08-05" })).toMatchObject({
        status: 400,
        error: "invalid_argument",
      });
      expect(await api.create(room, { from: "2026-12-01", to: "2026-12-05" })).toMatchObject({
        status: 422,
        error: "validation_failed",
      });
      expect(await api.create(room, { from: "2027-08-05", to: "2027-08-06", reason: "x".repeat(501) })).toMatchObject({
        status: 400,
        error: "invalid_argument",
      });
      expect(await api.create("not-a-room", { from: "2027-08-05", to: "2027-08-06" })).toMatchObject({ status: 404 });
      expect(await api.list("from=tomorrow")).toMatchObject({ status: 400, error: "invalid_argument" });

      // another property's room and period are not found
      const theirs = await periods(face, other.manager.accessToken).create(other.rooms[0]!.id, {
        from: "2027-08-05",
        to: "2027-08-06",
      });
      expect(theirs.status).toBe(face === "rest" ? 201 : 200);
      const theirId = theirs.body!.outOfOrderPeriod!.id;
      expect(await api.create(other.rooms[0]!.id, { from: "2027-08-05", to: "2027-08-06" })).toMatchObject({
        status: 404,
        error: "not_found",
      });
      expect(await api.update(theirId, { to: "2027-08-07" })).toMatchObject({ status: 404, error: "not_found" });
      expect(await api.remove(theirId)).toMatchObject({ status: 404, error: "not_found" });
      expect(await api.list(`roomId=${other.rooms[0]!.id}`)).toMatchObject({ status: 404, error: "not_found" });

      // front desk may read periods but not schedule them (rooms.manage)
      const desk = await createStaffSession(app, { propertyCode: h.p.code, role: "front_desk" });
      const deskApi = periods(face, desk.accessToken);
      expect((await deskApi.list()).status).toBe(200);
      expect(await deskApi.create(room, { from: "2027-08-05", to: "2027-08-06" })).toMatchObject({
        status: 403,
        error: "forbidden",
      });
      expect(await deskApi.update(theirId, { to: "2027-08-07" })).toMatchObject({ status: 403, error: "forbidden" });
    });
  }

  it("an internal client names the property; another property's code is 404 (gRPC)", async () => {
    const h = await hotel();
    const other = await hotel();
    const inventory = createClient(InventoryService, transportOf("grpc"));
    const internal = { headers: bearer(h.internal.accessToken) };
    const { outOfOrderPeriod } = await inventory.createOutOfOrderPeriod(
      { propertyCode: h.p.code, roomId: h.rooms[1]!.id, from: "2026-12-02", to: "2026-12-03" },
      internal,
    );
    expect(outOfOrderPeriod!.from).toBe("2026-12-02");
    await expect(inventory.listOutOfOrderPeriods({ propertyCode: other.p.code }, internal)).rejects.toMatchObject({
      code: Code.NotFound,
    });
    await expect(inventory.listOutOfOrderPeriods({ propertyCode: "" }, internal)).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    // a period beginning today is deleted when removed
    const left = await inventory.deleteOutOfOrderPeriod(
      { propertyCode: h.p.code, outOfOrderPeriodId: outOfOrderPeriod!.id },
      internal,
    );
    expect(left.outOfOrderPeriod).toBeUndefined();
  });
});
