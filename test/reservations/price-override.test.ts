import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { stayInRoom } from "../../src/modules/reservations/index.ts";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// A price other than the daily prices is charged only when the request says so (`priceOverride`) and the caller
// holds reservations.override_price; the reservation records who did it. Two nights at 250.00 cost 50000.

let app: TestApp;
let property: { id: string; code: string };
let dbl: { id: string };
let bar: { id: string };
let manager: { accessToken: string; userId: string };
let frontDesk: { accessToken: string };
let internal: { clientId: string; accessToken: string };
let night = 0;

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "OVR-1", businessDate: "2027-03-01" });
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  for (let i = 0; i < 12; i++)
    await inventory.createRoom(property.id, { number: `1${String(i).padStart(2, "0")}`, roomTypeId: dbl.id });
  bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-03-01",
    to: "2027-06-30",
    amountMinor: 25000n,
  });
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  frontDesk = await createStaffSession(app, { propertyCode: property.code, role: "front_desk" });
  internal = await createTestClient(app, {
    kind: "internal",
    provider: "pms",
    propertyCodes: [property.code],
    scopes: ["admin", "reservations.write", "reservations.read"],
  });
});
afterAll(async () => {
  await app?.close();
});

/** A fresh two-night stay each call, so the rooms never run out. */
function stay(): { arrivalDate: string; departureDate: string } {
  const day = 2 + 2 * night++;
  const d = (n: number) => `2027-04-${String(n).padStart(2, "0")}`;
  return { arrivalDate: d(day), departureDate: d(day + 2) };
}

const mobileStay = (over: Record<string, unknown> = {}) => ({
  holderName: "Price Guest",
  ...stay(),
  roomTypeId: dbl.id,
  ratePlanId: bar.id,
  adults: 2,
  currency: "TRY",
  totalMinor: 1,
  ...over,
});

async function rest(
  body: unknown,
  token: string,
): Promise<{ status: number; body: { id?: string; totalMinor?: number; error?: { code: string } } }> {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": newId() },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as never };
}

async function recorded(reservationId: string): Promise<{ by: string | null; at: Date | null; listed: string | null }> {
  const { rows } = await app.db.pool.query<{ by: string | null; at: Date | null; listed: string | null }>(
    "select price_override_by as by, price_override_at as at, price_listed_minor::text as listed from reservations where id = $1",
    [reservationId],
  );
  return rows[0]!;
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

describe("price override", () => {
  it("REST: a manager's totalMinor:1 is refused without priceOverride, charged and recorded with it", async () => {
    const accidental = await rest(mobileStay(), manager.accessToken);
    expect(accidental.status).toBe(422);
    expect(accidental.body.error?.code).toBe("validation_failed");

    const listed = await rest(mobileStay({ totalMinor: 50000 }), manager.accessToken);
    expect(listed.status).toBe(201);
    expect(await recorded(listed.body.id!)).toEqual({ by: null, at: null, listed: null });

    const explicit = await rest(mobileStay({ totalMinor: 40000, priceOverride: true }), manager.accessToken);
    expect(explicit.status).toBe(201);
    expect(explicit.body.totalMinor).toBe(40000);
    const record = await recorded(explicit.body.id!);
    expect(record).toMatchObject({ by: `user:${manager.userId}`, listed: "50000" });
    expect(record.at).toBeInstanceOf(Date);

    // asking for an override needs the permission; without asking the price is checked for everyone
    expect((await rest(mobileStay({ totalMinor: 40000, priceOverride: true }), frontDesk.accessToken)).status).toBe(
      403,
    );
    expect((await rest(mobileStay({ totalMinor: 40000 }), frontDesk.accessToken)).status).toBe(422);
  });

  it("Connect: MobileService applies the same rule", async () => {
    const mobile = createClient(MobileService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
    const opts = () => ({ headers: { ...bearer(manager.accessToken), "idempotency-key": newId() } });
    const base = () => ({
      holderName: "Connect Guest",
      ...stay(),
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 2,
      currency: "TRY",
    });
    expect(await failure(mobile.createMobileReservation({ ...base(), totalMinor: 1n }, opts()))).toEqual({
      code: Code.InvalidArgument,
      appCode: "validation_failed",
    });
    const { reservation } = await mobile.createMobileReservation(
      { ...base(), totalMinor: 1n, priceOverride: true },
      opts(),
    );
    expect(reservation!.totalMinor).toBe(1n);
    expect((await recorded(reservation!.id)).by).toBe(`user:${manager.userId}`);
    const fd = { headers: { ...bearer(frontDesk.accessToken), "idempotency-key": newId() } };
    expect(
      await failure(mobile.createMobileReservation({ ...base(), totalMinor: 1n, priceOverride: true }, fd)),
    ).toMatchObject({ code: Code.PermissionDenied, appCode: "forbidden" });
  });

  it("gRPC: ReservationService (internal client with admin) and MobileService need priceOverride too", async () => {
    const transport = createGrpcTransport({ baseUrl: app.baseUrl });
    const reservations = createClient(ReservationService, transport);
    const h = { headers: bearer(internal.accessToken) };
    const request = (amountMinor: bigint, priceOverride: boolean) => ({
      propertyCode: property.code,
      holderName: "Grpc Guest",
      ...stay(),
      rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2, children: 0, amountMinor }],
      priceOverride,
    });
    expect(await failure(reservations.createReservation(request(1n, false), h))).toMatchObject({
      appCode: "validation_failed",
    });
    const { reservation } = await reservations.createReservation(request(30000n, true), h);
    expect(reservation!.totalMinor).toBe(30000n);
    expect(reservation!.rooms[0]!.nightlyMinor).toEqual([15000n, 15000n]);
    expect(await recorded(reservation!.id)).toMatchObject({ by: `client:${internal.clientId}`, listed: "50000" });

    const frontDeskCall = { headers: bearer(frontDesk.accessToken) };
    expect(await failure(reservations.createReservation(request(30000n, true), frontDeskCall))).toMatchObject({
      code: Code.PermissionDenied,
      appCode: "forbidden",
    });

    const mobile = createClient(MobileService, transport);
    const body = {
      holderName: "Grpc Mobile",
      ...stay(),
      roomTypeId: dbl.id,
      ratePlanId: bar.id,
      adults: 2,
      currency: "TRY",
      totalMinor: 1n,
    };
    expect(
      await failure(
        mobile.createMobileReservation(body, {
          headers: { ...bearer(manager.accessToken), "idempotency-key": newId() },
        }),
      ),
    ).toMatchObject({ appCode: "validation_failed" });
  });
});
