// The inventory lists page with a cursor and a documented maximum: room types, rooms and rate plans (500 a page, by
// code or number) over Connect and gRPC, out-of-order periods (1,000 a page, by first day, room and id) over REST,
// Connect and gRPC. Every row comes once, in the list's order; a bad cursor or limit is 400 naming the field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let code: string;
let token: string;
const periodIds: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2027-06-01" });
  code = p.code;
  const inv = app.services.inventory;
  const types = [];
  for (const c of ["SGL", "DBL", "TWN", "STE", "FAM"])
    types.push(await inv.createRoomType(p.id, { code: c, name: c, maxOccupancy: 2 }));
  const rooms = [];
  for (let i = 0; i < 7; i++)
    rooms.push(await inv.createRoom(p.id, { number: `${100 + i}`, roomTypeId: types[i % 5]!.id }));
  for (const c of ["BAR", "BB", "HB"])
    await inv.createRatePlan(p.id, { code: c, name: c, boardType: "ROOM_ONLY", roomTypeIds: [types[0]!.id] });
  // two periods on one day (ordered by room), others on later days
  for (const [i, room] of rooms.slice(0, 5).entries()) {
    const from = `2027-06-0${2 + Math.max(0, i - 1)}`;
    const period = await inv.createOutOfOrderPeriod(p.id, { roomId: room.id, from, to: "2027-06-09" });
    periodIds.push(period.id);
  }
  token = (await createStaffSession(app, { propertyCode: code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const faces: [string, () => Transport][] = [
  ["Connect", () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
  ["gRPC", () => createGrpcTransport({ baseUrl: app.baseUrl })],
];

async function all<T>(page: (cursor: string) => Promise<{ items: T[]; nextCursor: string }>): Promise<T[]> {
  const out: T[] = [];
  let cursor = "";
  for (let i = 0; i < 20; i++) {
    const p = await page(cursor);
    expect(p.items.length).toBeLessThanOrEqual(2);
    out.push(...p.items);
    if (p.nextCursor === "") return out;
    cursor = p.nextCursor;
  }
  throw new Error("no last page");
}

describe("inventory lists page with a cursor", () => {
  for (const [face, transport] of faces)
    it(`${face}: room types, rooms, rate plans and periods, pages of 2, each row once in order`, async () => {
      const inv = createClient(InventoryService, transport());
      const headers = bearer(token);
      const propertyCode = code;
      const types = await all(async (cursor) => {
        const r = await inv.listRoomTypes({ propertyCode, cursor, limit: 2 }, { headers });
        return { items: r.roomTypes.map((t) => t.code), nextCursor: r.nextCursor };
      });
      expect(types).toEqual(["DBL", "FAM", "SGL", "STE", "TWN"]);
      const rooms = await all(async (cursor) => {
        const r = await inv.listRooms({ propertyCode, cursor, limit: 2 }, { headers });
        return { items: r.rooms.map((t) => t.number), nextCursor: r.nextCursor };
      });
      expect(rooms).toEqual(["100", "101", "102", "103", "104", "105", "106"]);
      const plans = await all(async (cursor) => {
        const r = await inv.listRatePlans({ propertyCode, cursor, limit: 2 }, { headers });
        return { items: r.ratePlans.map((t) => t.code), nextCursor: r.nextCursor };
      });
      expect(plans).toEqual(["BAR", "BB", "HB"]);
      const periods = await all(async (cursor) => {
        const r = await inv.listOutOfOrderPeriods({ propertyCode, cursor, limit: 2 }, { headers });
        return { items: r.outOfOrderPeriods.map((t) => t.id), nextCursor: r.nextCursor };
      });
      expect(periods).toEqual(periodIds);
      // one page of everything by default
      expect((await inv.listRooms({ propertyCode }, { headers })).rooms).toHaveLength(7);
      for (const bad of [{ limit: 501 }, { limit: -1 }, { cursor: "bm90LWEtY3Vyc29y" }]) {
        const err = await inv.listRoomTypes({ propertyCode, ...bad }, { headers }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConnectError);
        expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      }
    });

  it("REST: out-of-order periods page with ?limit and ?cursor; a limit over 1000 is 400 naming it", async () => {
    const ids: string[] = [];
    let cursor = "";
    for (let i = 0; i < 10; i++) {
      const res = await fetch(
        `${app.baseUrl}/api/mobile/v1/out-of-order-periods?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { headers: bearer(token) },
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { outOfOrderPeriods: { id: string }[]; nextCursor: string };
      ids.push(...body.outOfOrderPeriods.map((p) => p.id));
      if (body.nextCursor === "") break;
      cursor = body.nextCursor;
    }
    expect(ids).toEqual(periodIds);
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/out-of-order-periods?limit=1001`, { headers: bearer(token) });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("limit");
  });
});
