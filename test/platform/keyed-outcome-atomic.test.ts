import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession } from "../helpers/auth.ts";
import { createHotel, services, type Hotel } from "../reservations/fixtures.ts";

// The other side of test/platform/keyed-transactions.test.ts, over the wire: keyed writes of three modules (city ledger, reservations, folio) whose
// outcome cannot be recorded must leave nothing behind. Were a service's transaction opened without the call's
// handle, its change (and its audit entry) would commit on its own and the call would even succeed: the
// interceptor then records the outcome in a statement of its own, whose failure it only logs.

let app: TestApp;
let hotel: Hotel;
let token: string;

function client<S extends DescService>(service: S, key: string) {
  const interceptors = [
    (next: (r: { header: Headers }) => unknown) => (req: { header: Headers }) => {
      req.header.set("authorization", `Bearer ${token}`);
      req.header.set("idempotency-key", key);
      return next(req);
    },
  ] as never;
  const transport: Transport = createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors });
  return createClient(service, transport);
}

const auditEntries = async (): Promise<number> =>
  Number(
    (
      await app.db.pool.query<{ n: string }>("select count(*) as n from audit_changes where property_id = $1", [
        hotel.propertyId,
      ])
    ).rows[0]!.n,
  );

beforeAll(async () => {
  app = await startTestApp();
  hotel = await createHotel(app, services(app).inventory, { rooms: 5 });
  token = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

describe("a keyed write whose outcome cannot be recorded commits nothing", () => {
  it("ledger account, reservation and payment: refused bookkeeping leaves no change and no audit entry; the retry runs once", async () => {
    const booked = await client(ReservationService, randomUUID()).createReservation({
      propertyCode: hotel.code,
      holderName: "Folio Holder",
      arrivalDate: "2026-12-01",
      departureDate: "2026-12-03",
      rooms: [{ roomTypeId: hotel.roomTypeId, ratePlanId: hotel.ratePlanId, adults: 2 }],
    });
    const { folio } = await client(FolioService, randomUUID()).getFolio({
      reservationId: booked.reservation!.id,
      propertyCode: hotel.code,
    });
    const calls = [
      (key: string) =>
        client(FolioService, key).createLedgerAccount({
          propertyCode: hotel.code,
          code: "ACME",
          name: "Acme Travel",
          kind: "COMPANY",
          creditLimitMinor: 1000_00n,
        }),
      (key: string) =>
        client(ReservationService, key).createReservation({
          propertyCode: hotel.code,
          holderName: "Keyed Holder",
          arrivalDate: "2026-12-05",
          departureDate: "2026-12-06",
          rooms: [{ roomTypeId: hotel.roomTypeId, ratePlanId: hotel.ratePlanId, adults: 1 }],
        }),
      (key: string) =>
        client(FolioService, key).postPayment({ folioId: folio!.id, amountMinor: 500_00n, methodCode: "CASH" }),
    ];
    const keys = calls.map(() => randomUUID());

    await app.db.pool.query(`create or replace function test_refuse_done() returns trigger language plpgsql as $$
      begin if new.state = 'done' then raise exception 'bookkeeping refused'; end if; return new; end $$`);
    await app.db.pool.query(
      "create trigger test_refuse_done before update or insert on idempotency_keys for each row execute function test_refuse_done()",
    );
    const before = await auditEntries();
    try {
      for (const [i, call] of calls.entries()) {
        const outcome = await call(keys[i]!).then(
          () => "succeeded",
          () => "failed",
        );
        expect({ call: i, outcome }).toEqual({ call: i, outcome: "failed" });
        expect(await auditEntries()).toBe(before);
      }
    } finally {
      await app.db.pool.query("drop trigger test_refuse_done on idempotency_keys");
    }
    // The same keys run now (nothing was stored for them), each change once, with its audit entry.
    for (const [i, call] of calls.entries()) await call(keys[i]!);
    const after = await auditEntries();
    expect(after).toBeGreaterThanOrEqual(before + calls.length);
    for (const [i, call] of calls.entries()) await call(keys[i]!);
    expect(await auditEntries()).toBe(after);
  });
});
