import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import {
  ConnectivityService,
  CreateReservationEventRequestSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { fromJson } from "@bufbuild/protobuf";
import { createAdminService } from "../../src/modules/admin/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient } from "../helpers/auth.ts";
import { createHotel, services, type Hotel } from "../reservations/fixtures.ts";

let app: TestApp;
let hotel: Hotel;
let token: string;

type Face = "connect" | "grpc";
function transport(face: Face, headers: Record<string, string>): Transport {
  const interceptors = [
    (next: (r: { header: Headers }) => unknown) => (req: { header: Headers }) => {
      for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
      return next(req);
    },
  ] as never;
  return face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl, interceptors })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors });
}
function reservations(face: Face, key?: string): Client<typeof ReservationService> {
  return createClient(
    ReservationService,
    transport(face, { authorization: `Bearer ${token}`, ...(key !== undefined ? { "idempotency-key": key } : {}) }),
  );
}
function folios(face: Face, key?: string): Client<typeof FolioService> {
  return createClient(
    FolioService,
    transport(face, { authorization: `Bearer ${token}`, ...(key !== undefined ? { "idempotency-key": key } : {}) }),
  );
}

const createRequest = (holderName: string) => ({
  propertyCode: hotel.code,
  holderName,
  arrivalDate: "2026-12-01",
  departureDate: "2026-12-03",
  rooms: [{ roomTypeId: hotel.roomTypeId, ratePlanId: hotel.ratePlanId, adults: 2 }],
});
const countHolder = async (holder: string): Promise<number> =>
  Number(
    (await app.db.pool.query<{ n: string }>("select count(*) as n from reservations where holder_name = $1", [holder]))
      .rows[0]!.n,
  );

beforeAll(async () => {
  app = await startTestApp();
  hotel = await createHotel(app, services(app).inventory, { rooms: 40 });
  token = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("Idempotency-Key on the gRPC/Connect-only services", () => {
  it("30 parallel CreateReservation calls with one key over Connect create one reservation and all get its answer", async () => {
    const key = randomUUID();
    const client = reservations("connect", key);
    const answers = await Promise.allSettled(
      Array.from({ length: 30 }, () => client.createReservation(createRequest("Parallel Connect"))),
    );
    const ids = new Set(answers.flatMap((a) => (a.status === "fulfilled" ? [a.value.reservation!.id] : [])));
    expect(ids.size).toBe(1);
    expect(await countHolder("Parallel Connect")).toBe(1);
  });

  it("PostPayment twice with one key over gRPC posts one payment; the second is the replay", async () => {
    const r = await reservations("grpc").createReservation(createRequest("Payment Guest"));
    const { folio } = await folios("grpc").getFolio({ reservationId: r.reservation!.id, propertyCode: hotel.code });
    const key = randomUUID();
    const first = await folios("grpc", key).postPayment({
      folioId: folio!.id,
      amountMinor: 1234_00n,
      methodCode: "CASH",
    });
    const second = await folios("grpc", key).postPayment({
      folioId: folio!.id,
      amountMinor: 1234_00n,
      methodCode: "CASH",
    });
    expect(second.payment!.id).toBe(first.payment!.id);
    const after = (await folios("grpc").getFolio({ folioId: folio!.id })).folio!;
    expect(after.paymentsMinor).toBe(1234_00n);
  });
});

describe("the stored outcome commits in the RPC's transaction", () => {
  it("a write whose outcome cannot be recorded is not committed, and its retry runs once", async () => {
    // Make recording any outcome fail (as a crash between the write and the bookkeeping would).
    await app.db.pool.query(`create or replace function test_refuse_done() returns trigger language plpgsql as $$
      begin if new.state = 'done' then raise exception 'bookkeeping refused'; end if; return new; end $$`);
    await app.db.pool.query(
      "create trigger test_refuse_done before update on idempotency_keys for each row execute function test_refuse_done()",
    );
    const key = randomUUID();
    try {
      const failed = await reservations("connect", key)
        .createReservation(createRequest("Atomic Guest"))
        .then(
          () => "succeeded",
          () => "failed",
        );
      // The client is not told "created" for a write that nothing remembers, and nothing was written.
      expect(failed).toBe("failed");
      expect(await countHolder("Atomic Guest")).toBe(0);
    } finally {
      await app.db.pool.query("drop trigger test_refuse_done on idempotency_keys");
    }
    const retry = await reservations("connect", key).createReservation(createRequest("Atomic Guest"));
    const replay = await reservations("grpc", key).createReservation(createRequest("Atomic Guest"));
    expect(replay.reservation!.id).toBe(retry.reservation!.id);
    expect(await countHolder("Atomic Guest")).toBe(1);
  });

  it("the key row is locked while the write is uncommitted, and completed in the same commit", async () => {
    const key = randomUUID();
    await reservations("grpc", key).createReservation(createRequest("Row Guest"));
    const row = (
      await app.db.pool.query<{ state: string; xmin: string }>(
        "select state, xmin::text from idempotency_keys where key = $1",
        [key],
      )
    ).rows[0]!;
    const reservation = (
      await app.db.pool.query<{ xmin: string }>("select xmin::text from reservations where holder_name = 'Row Guest'")
    ).rows[0]!;
    // Same transaction id: the outcome and the reservation were committed by one transaction.
    expect(row.state).toBe("done");
    expect(row.xmin).toBe(reservation.xmin);
  });
});

describe("refusals are never replayed (the retry runs once the cause is gone)", () => {
  async function partner(): Promise<{ clientId: string; accessToken: string }> {
    return createTestClient(app, { propertyCodes: [hotel.code], scopes: ["reservations.write", "reservations.read"] });
  }
  const event = {
    eventType: "NEW",
    externalReference: "BK-REFUSAL",
    arrivalDate: "2026-12-10",
    departureDate: "2026-12-12",
    rooms: [{ roomTypeCode: "DBL", ratePlanCode: "RO", adults: 2, amountMinor: 200000 }],
    totalMinor: 200000,
    currency: "TRY",
    holder: { name: "Partner Guest" },
  };

  it("REST: 403 partner_not_approved, approval, then the same key runs (202, not the stored 403); a replay carries the new X-Request-Id", async () => {
    const c = await partner();
    const key = randomUUID();
    const send = (requestId: string) =>
      fetch(`${app.baseUrl}/api/v1/properties/${hotel.code}/reservation-events`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${c.accessToken}`,
          "content-type": "application/json",
          "idempotency-key": key,
          "x-request-id": requestId,
        },
        body: JSON.stringify(event),
      });
    const refused = await send("req-refused-1");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("partner_not_approved");
    await createAdminService(app.deps).approveClient(c.clientId);
    const accepted = await send("req-accepted-2");
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("idempotency-replayed")).toBeNull();
    const body = await accepted.text();
    const replayed = await send("req-replayed-3");
    expect(replayed.status).toBe(202);
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
    expect(replayed.headers.get("x-request-id")).toBe("req-replayed-3");
    expect(await replayed.text()).toBe(body);
  });

  it("Connect and gRPC: PermissionDenied partner_not_approved is not stored either", async () => {
    for (const face of ["connect", "grpc"] as const) {
      const c = await partner();
      const key = randomUUID();
      const client = createClient(
        ConnectivityService,
        transport(face, { authorization: `Bearer ${c.accessToken}`, "idempotency-key": key }),
      );
      const request = fromJson(CreateReservationEventRequestSchema, {
        propertyCode: hotel.code,
        ...event,
        externalReference: `BK-${face}`,
      });
      const refused = await client.createReservationEvent(request).then(
        () => "accepted",
        (e: { rawMessage?: string }) => e.rawMessage ?? "failed",
      );
      expect(refused).not.toBe("accepted");
      await createAdminService(app.deps).approveClient(c.clientId);
      const accepted = await client.createReservationEvent(request);
      expect(accepted.eventId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
