// Housekeeping status set by staff (the panel's room rack): SetRoomStatus over Connect and gRPC for a session
// holding rooms.manage, in its active property only; without the permission 403, another property's room 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { InventoryService, RoomStatus } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const client = (face: "connect" | "grpc") =>
  createClient(
    InventoryService,
    face === "grpc"
      ? createGrpcTransport({ baseUrl: app.baseUrl })
      : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  );

async function hotel() {
  const p = await createTestProperty(app, { businessDate: "2027-03-01" });
  const dbl = await app.services.inventory.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const room = await app.services.inventory.createRoom(p.id, { number: "101", roomTypeId: dbl.id });
  return { p, room };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e).code,
  );

describe("SetRoomStatus by staff", () => {
  it.each(["connect", "grpc"] as const)(
    "a manager changes a room in one call; others are refused (%s)",
    async (face) => {
      const a = await hotel();
      const b = await hotel();
      const manager = {
        headers: bearer((await createStaffSession(app, { propertyCode: a.p.code, role: "manager" })).accessToken),
      };
      const desk = {
        headers: bearer((await createStaffSession(app, { propertyCode: a.p.code, role: "front_desk" })).accessToken),
      };
      const rpc = client(face);
      const dirty = await rpc.setRoomStatus(
        { propertyCode: a.p.code, roomId: a.room.id, status: RoomStatus.DIRTY },
        manager,
      );
      expect(dirty.room?.status).toBe(RoomStatus.DIRTY);
      const listed = await rpc.listRooms({ propertyCode: a.p.code }, manager);
      expect(listed.rooms.map((r) => [r.number, r.status])).toEqual([["101", RoomStatus.DIRTY]]);
      const inspected = await rpc.setRoomStatus(
        { propertyCode: a.p.code, roomId: a.room.id, status: RoomStatus.INSPECTED },
        manager,
      );
      expect(inspected.room?.status).toBe(RoomStatus.INSPECTED);
      // no rooms.manage: refused, nothing changed
      expect(
        await failure(rpc.setRoomStatus({ propertyCode: a.p.code, roomId: a.room.id, status: RoomStatus.DIRTY }, desk)),
      ).toBe(Code.PermissionDenied);
      // another property, by its code or by its room's id under ours: not found
      expect(
        await failure(
          rpc.setRoomStatus({ propertyCode: b.p.code, roomId: b.room.id, status: RoomStatus.DIRTY }, manager),
        ),
      ).toBe(Code.NotFound);
      expect(
        await failure(
          rpc.setRoomStatus({ propertyCode: a.p.code, roomId: b.room.id, status: RoomStatus.DIRTY }, manager),
        ),
      ).toBe(Code.NotFound);
      const after = await app.services.inventory.listRooms(b.p.id);
      expect(after.map((r) => r.status)).toEqual(["CLEAN"]);
      expect((await rpc.listRooms({ propertyCode: a.p.code }, manager)).rooms[0]?.status).toBe(RoomStatus.INSPECTED);
    },
  );
});
