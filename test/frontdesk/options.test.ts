import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  ReservationService,
  ReservationSource,
  ReservationStatus,
} from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

// Options: a TENTATIVE reservation holds its rooms until optionUntil; the reservations.option-expiry job cancels it
// then (reason option_expired), on the real clock. Set on REST (mobile create), Connect and gRPC.

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
  for (const n of ["201", "202", "203", "204", "205", "206"])
    await inv.createRoom(p.id, { number: n, roomTypeId: dbl.id });
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
  return { p, dbl: dbl.id, bar: bar.id, manager };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

async function restCreate(h: Hotel, body: Record<string, unknown>) {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
    method: "POST",
    headers: {
      ...bearer(h.manager.accessToken),
      "content-type": "application/json",
      "idempotency-key": crypto.randomUUID(),
    },
    body: JSON.stringify({
      holderName: "Selin Koc",
      arrivalDate: "2026-12-10",
      departureDate: "2026-12-12",
      roomTypeId: h.dbl,
      ratePlanId: h.bar,
      adults: 2,
      totalMinor: 20_000,
      currency: "TRY",
      ...body,
    }),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      id?: string;
      optionUntil?: string;
      error?: { details: { field: string }[]; code: string };
    },
  };
}

async function rpcCreate(face: "connect" | "grpc", h: Hotel, status: ReservationStatus, optionUntil?: Date) {
  return createClient(ReservationService, transportOf(face)).createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Selin Koc",
      arrivalDate: "2026-12-10",
      departureDate: "2026-12-12",
      rooms: [{ roomTypeId: h.dbl, ratePlanId: h.bar, adults: 2, children: 0 }],
      status,
      ...(optionUntil ? { optionUntil: timestampFromDate(optionUntil) } : {}),
    },
    { headers: bearer(h.manager.accessToken) },
  );
}

async function sold(h: Hotel): Promise<number> {
  const a = await app.services.inventory.getAvailability(h.p.id, { from: "2026-12-10", to: "2026-12-11" });
  return a[0]!.days[0]!.sold;
}

async function failure(work: Promise<unknown>) {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError)
      return { error: err.metadata.get("x-error-code"), message: err.rawMessage, fields: err.message };
    throw err;
  }
  throw new Error("expected the call to fail");
}

describe("options", { timeout: 60_000 }, () => {
  it("an option set on REST, Connect and gRPC expires on the real clock: cancelled, option_expired, rooms back; confirmed and extended ones stay", async () => {
    const h = await hotel();
    // far enough ahead that the five creates and two updates finish before it on a busy box
    const soon = new Date(Date.now() + 6_000);
    const rest = await restCreate(h, { status: "TENTATIVE", optionUntil: soon.toISOString() });
    expect(rest.status).toBe(201);
    expect(rest.body.optionUntil).toBe(soon.toISOString());
    const connect = (await rpcCreate("connect", h, ReservationStatus.TENTATIVE, soon)).reservation!;
    const grpc = (await rpcCreate("grpc", h, ReservationStatus.TENTATIVE, soon)).reservation!;
    expect(grpc.optionUntil).toBeDefined();
    const confirmed = (await rpcCreate("connect", h, ReservationStatus.TENTATIVE, soon)).reservation!;
    const extended = (await rpcCreate("grpc", h, ReservationStatus.TENTATIVE, soon)).reservation!;
    const reservations = createClient(ReservationService, transportOf("connect"));
    const staff = { headers: bearer(h.manager.accessToken) };
    const up = await reservations.updateReservation(
      { propertyCode: h.p.code, reservationId: confirmed.id, status: ReservationStatus.GUARANTEED },
      staff,
    );
    expect(up.reservation!.optionUntil).toBeUndefined();
    const later = new Date(Date.now() + 3_600_000);
    await reservations.updateReservation(
      { propertyCode: h.p.code, reservationId: extended.id, optionUntil: timestampFromDate(later) },
      staff,
    );
    expect(await sold(h)).toBe(5);

    const expiring = [rest.body.id!, connect.id, grpc.id];
    const started = Date.now();
    const statusOf = async (id: string) =>
      (await reservations.getReservation({ propertyCode: h.p.code, reservationId: id }, staff)).reservation!;
    while (Date.now() - started < 15_000) {
      const all = await Promise.all(expiring.map(statusOf));
      if (all.every((r) => r.status === ReservationStatus.CANCELLED)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // due 6 s after the creates; a worker fetches a due job within about a second
    expect(Date.now() - soon.getTime()).toBeLessThan(4_000);
    for (const id of expiring) {
      const r = await statusOf(id);
      expect(r).toMatchObject({ status: ReservationStatus.CANCELLED, cancellationReason: "option_expired" });
      expect(r.optionUntil).toBeUndefined();
    }
    expect((await statusOf(confirmed.id)).status).toBe(ReservationStatus.GUARANTEED);
    expect(await statusOf(extended.id)).toMatchObject({ status: ReservationStatus.TENTATIVE });
    expect(await sold(h)).toBe(2);
    const { rows } = await app.deps.db.pool.query<{ type: string; data: { id: string; status: string } }>(
      "select type, data from domain_events where property_id = $1 and type = 'reservation.cancelled'",
      [h.p.id],
    );
    expect(rows.map((e) => e.data.id).sort()).toEqual([...expiring].sort());
    // the mobile app reads the reason
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${rest.body.id!}`, {
      headers: bearer(h.manager.accessToken),
    });
    expect(((await res.json()) as { reservation: Record<string, unknown> }).reservation).toMatchObject({
      status: "CANCELLED",
      cancellationReason: "option_expired",
    });
  });

  it("refuses an option on a GUARANTEED stay, in the past or over a year ahead, naming optionUntil (REST, Connect, gRPC)", async () => {
    const h = await hotel();
    const past = new Date(Date.now() - 60_000);
    const far = new Date(Date.now() + 400 * 86_400_000);
    for (const [status, until] of [
      ["GUARANTEED", new Date(Date.now() + 60_000)],
      ["TENTATIVE", past],
      ["TENTATIVE", far],
    ] as const) {
      const rest = await restCreate(h, { status, optionUntil: until.toISOString() });
      expect(rest.status).toBe(422);
      expect(rest.body.error!.details[0]!.field).toBe("optionUntil");
      for (const face of ["connect", "grpc"] as const) {
        const f = await failure(rpcCreate(face, h, ReservationStatus[status], until));
        expect(f.error).toBe("validation_failed");
        expect(f.message).toContain("optionUntil");
      }
    }
    const malformed = await restCreate(h, { status: "TENTATIVE", optionUntil: "tomorrow" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error!.code).toBe("invalid_argument");
    // an option on a confirmed reservation through an update
    const r = (await rpcCreate("grpc", h, ReservationStatus.GUARANTEED)).reservation!;
    const f = await failure(
      createClient(ReservationService, transportOf("grpc")).updateReservation(
        {
          propertyCode: h.p.code,
          reservationId: r.id,
          optionUntil: timestampFromDate(new Date(Date.now() + 60_000)),
        },
        { headers: bearer(h.manager.accessToken) },
      ),
    );
    expect(f.error).toBe("validation_failed");
    expect(await sold(h)).toBe(1);
  });
});
