import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { verifyInventory } from "../../src/ops/inventory-verify.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

// inventory:verify and --repair on a live database, and the stays whose nights it found misplaced: a stay moved to
// another room type and then lengthened gave back its earlier nights on the new type (which never held them), and
// a cancelled in-house stay's past nights are kept (the day rows say so; the stay now says until when).

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const run = promisify(execFile);
let databaseUrl: string;
let app: TestApp;
beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ databaseUrl });
});
afterAll(async () => {
  await app?.close();
});

async function ops(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ["src/ops/cli.ts", ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
      timeout: 30_000,
    });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

async function hotel(code: string) {
  const p = await createTestProperty(app, { code, businessDate: "2027-04-01" });
  const inv = app.services.inventory;
  const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  const twn = await inv.createRoomType(p.id, { code: "TWN", name: "Twin", maxOccupancy: 2 });
  const d1 = await inv.createRoom(p.id, { number: "101", roomTypeId: dbl.id });
  const t1 = await inv.createRoom(p.id, { number: "201", roomTypeId: twn.id });
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Bar",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id, twn.id],
  });
  for (const roomTypeId of [dbl.id, twn.id])
    await inv.setPrices(p.id, {
      ratePlanId: bar.id,
      roomTypeId,
      from: "2027-04-01",
      to: "2027-05-01",
      amountMinor: 100n,
    });
  const manager = await createStaffSession(app, { propertyCode: code, role: "manager" });
  return { p, dbl, twn, d1, t1, bar, headers: bearer(manager.accessToken) };
}

/** Sold per day of [from, to) for each room type code, over the given face. */
async function sold(transport: Transport, code: string, headers: Record<string, string>, from: string, to: string) {
  const answer = await createClient(InventoryService, transport).getAvailability(
    { propertyCode: code, from, to },
    { headers },
  );
  return Object.fromEntries(answer.roomTypes.map((t) => [t.code, t.days.map((d) => d.sold)]));
}

async function nightAudit(headers: Record<string, string>, expectedBusinessDate: string): Promise<void> {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/night-audit`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify({ expectedBusinessDate }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("stays that change room type keep their earlier nights where they were", () => {
  for (const face of ["connect", "grpc"] as const)
    it(`a moved in-house stay lengthened over ${face} gives back and takes only the nights that changed`, async () => {
      const transport =
        face === "grpc"
          ? createGrpcTransport({ baseUrl: app.baseUrl })
          : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
      const h = await hotel(`MOVE-${face.toUpperCase()}`);
      const reservations = createClient(ReservationService, transport);
      const propertyCode = h.p.code;
      const { reservation } = await reservations.createReservation(
        {
          propertyCode,
          source: ReservationSource.DIRECT,
          holderName: "Guest",
          arrivalDate: "2027-04-01",
          departureDate: "2027-04-04",
          rooms: [{ roomTypeId: h.dbl.id, ratePlanId: h.bar.id, adults: 1, children: 0 }],
        },
        { headers: h.headers },
      );
      const line = reservation!.rooms[0]!.id;
      const ids = { propertyCode, reservationId: reservation!.id, reservationRoomId: line };
      await reservations.checkInRoomLine({ ...ids, roomId: h.d1.id }, { headers: h.headers });
      await nightAudit(h.headers, "2027-04-01");
      await reservations.moveRoom({ ...ids, roomId: h.t1.id }, { headers: h.headers });
      await reservations.updateReservation(
        { propertyCode, reservationId: reservation!.id, departureDate: "2027-04-05" },
        { headers: h.headers },
      );
      // the first night stays on the double; the twin holds the nights from the move on, the added one included
      expect(await sold(transport, propertyCode, h.headers, "2027-04-01", "2027-04-06")).toEqual({
        DBL: [1, 0, 0, 0, 0],
        TWN: [0, 1, 1, 1, 0],
      });
      expect((await verifyInventory(app.deps, propertyCode, false)).drift).toEqual([]);
      // cancelled while in house: the nights before the business date stay sold, the rest come back
      await reservations.cancelReservation({ propertyCode, reservationId: reservation!.id }, { headers: h.headers });
      expect(await sold(transport, propertyCode, h.headers, "2027-04-01", "2027-04-06")).toEqual({
        DBL: [1, 0, 0, 0, 0],
        TWN: [0, 0, 0, 0, 0],
      });
      expect((await verifyInventory(app.deps, propertyCode, false)).drift).toEqual([]);
    });
});

describe("npm run ops -- inventory:verify", () => {
  it("finds drift, exits 1, repairs it with --repair (ARI feed and hint), then holds", async () => {
    const h = await hotel("VERIFY-1");
    const reservations = createClient(
      ReservationService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    );
    await reservations.createReservation(
      {
        propertyCode: h.p.code,
        source: ReservationSource.DIRECT,
        holderName: "Guest",
        arrivalDate: "2027-04-02",
        departureDate: "2027-04-04",
        rooms: [{ roomTypeId: h.dbl.id, ratePlanId: h.bar.id, adults: 1, children: 0 }],
      },
      { headers: h.headers },
    );
    expect(await verifyInventory(app.deps, h.p.code, false)).toMatchObject({
      propertyCode: "VERIFY-1",
      drift: [],
      repaired: false,
    });

    // what a lost write would leave: one night sold twice, another not at all, a phantom sale on the twin
    await app.db.query(
      `update room_type_days set sold = case date when '2027-04-02' then 2 else 0 end
        where property_id = $1 and room_type_id = $2 and date in ('2027-04-02', '2027-04-03')`,
      [h.p.id, h.dbl.id],
    );
    await app.db.query(
      `insert into room_type_days (property_id, room_type_id, date, total, sold) values ($1, $2, '2027-04-10', 1, 1)`,
      [h.p.id, h.twn.id],
    );
    const found = await ops("inventory:verify", "--property", h.p.code);
    expect(found.code).toBe(1);
    expect(found.stdout).toContain("DBL 2027-04-02 sold: stored 2, expected 1");
    expect(found.stdout).toContain("DBL 2027-04-03 sold: stored 0, expected 1");
    expect(found.stdout).toContain("TWN 2027-04-10 sold: stored 1, expected 0");
    const [head] = await app.db.query<{ seq: string }>(
      "select coalesce(max(seq), 0)::text as seq from ari_changes where property_id = $1",
      [h.p.id],
    );

    const repaired = await ops("inventory:verify", "--property", h.p.code, "--repair", "--json");
    expect(repaired.code).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ repaired: true });
    expect(JSON.parse(repaired.stdout).drift).toHaveLength(3);
    const transport = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
    expect(await sold(transport, h.p.code, h.headers, "2027-04-01", "2027-04-11")).toEqual({
      DBL: [0, 1, 1, 0, 0, 0, 0, 0, 0, 0],
      TWN: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    });
    const changes = await app.db.query<{ reason: string; room_types: string[] }>(
      "select reason, room_types from ari_changes where property_id = $1 and seq > $2 order by seq",
      [h.p.id, head!.seq],
    );
    expect(changes).toEqual([
      { reason: "inventory", room_types: ["DBL"] },
      { reason: "inventory", room_types: ["TWN"] },
    ]);
    const hints = await app.db.query<{ data: { reason: string } }>(
      "select data from domain_events where property_id = $1 and type = 'availability.changed' and data->>'reason' = 'inventory'",
      [h.p.id],
    );
    expect(hints).toHaveLength(2);
    expect((await verifyInventory(app.deps, h.p.code, false)).drift).toEqual([]);
    await expect(verifyInventory(app.deps, "NOPE-1", false)).rejects.toThrow("Property NOPE-1 not found.");
  }, 180_000);
});
