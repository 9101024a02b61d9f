import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { ChargeKind, FolioService, InvoiceStatus } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  seedInvoiceIssuer,
  seedReservation,
  seedRoom,
  seedRoomTypeAndRatePlan,
  type SeededProperty,
} from "../helpers/hotel-fixtures.ts";

let app: TestApp;
let hotel: SeededProperty;
let otherHotel: SeededProperty;
let manager: Client<typeof FolioService>;
let viewer: Client<typeof FolioService>;
let internal: Client<typeof FolioService>;
let otherManager: Client<typeof FolioService>;

function client(token?: string): Client<typeof FolioService> {
  const transport = createGrpcTransport({
    baseUrl: app.baseUrl,
    interceptors:
      token === undefined ? [] : [(next) => (req) => (req.header.set("authorization", `Bearer ${token}`), next(req))],
  });
  return createClient(FolioService, transport);
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ grpc: Code; code: string; details: { field: string; reason: string }[] }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const e = err as ConnectError;
  const [info] = e.findDetails(ErrorInfoSchema);
  return {
    grpc: e.code,
    code: info?.code ?? "",
    details: (info?.details ?? []).map((d) => ({ field: d.field, reason: d.reason })),
  };
}

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2026-11-22" });
  const q = await createTestProperty(app, { businessDate: "2026-11-22" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  otherHotel = await seedRoomTypeAndRatePlan(app.db.pool, q);
  manager = client((await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken);
  viewer = client((await createStaffSession(app, { propertyCode: p.code, role: "viewer" })).accessToken);
  otherManager = client((await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken);
  internal = client(
    (await createTestClient(app, { kind: "internal", provider: "backoffice", propertyCodes: [p.code], scopes: [] }))
      .accessToken,
  );
});
afterAll(async () => {
  await app?.close();
});

const stay = () =>
  seedReservation(app.db.pool, hotel, { arrival: "2026-11-22", departure: "2026-11-24", nightly: [100_00n, 100_00n] });

describe("FolioService over gRPC", () => {
  it("posts charges and payments, reverses, invoices, with int64 money", async () => {
    const r = await stay();
    const { folio } = await manager.getFolio({ reservationId: r.id });
    expect(folio).toMatchObject({
      reservationId: r.id,
      reservationCode: r.code,
      currency: "TRY",
      amountScale: 100,
      balanceMinor: 0n,
    });
    const { charge } = await manager.postCharge({
      folioId: folio!.id,
      code: "MINIBAR",
      description: "Water",
      amountMinor: 112_00n,
    });
    expect(charge).toMatchObject({ kind: ChargeKind.EXTRA, amountMinor: 112_00n, businessDate: "2026-11-22" });
    const { payment } = await manager.postPayment({ folioId: folio!.id, amountMinor: 50_00n, methodCode: "CASH" });
    const { reversal } = await manager.reversePayment({ paymentId: payment!.id, reference: "mistake" });
    expect(reversal).toMatchObject({ amountMinor: -50_00n, reversedPaymentId: payment!.id });
    expect((await failure(manager.reversePayment({ paymentId: payment!.id }))).code).toBe("invalid_transition");
    const after = (await manager.getFolio({ folioId: folio!.id })).folio!;
    expect([after.chargesMinor, after.paymentsMinor, after.balanceMinor]).toEqual([112_00n, 0n, 112_00n]);

    const draft = (await manager.createInvoiceDraft({ folioId: folio!.id })).invoice!;
    expect(draft).toMatchObject({
      status: InvoiceStatus.DRAFT,
      type: "E_ARSIV",
      // An extra: 10 % VAT and no accommodation tax (room nights only). 11200 * 1000 / 11000 = 1018.18 -> 1018.
      netMinor: 101_82n,
      taxMinor: 10_18n,
      accommodationTaxMinor: 0n,
      totalMinor: 112_00n,
    });
    expect(draft.number).toBeUndefined();
    await seedInvoiceIssuer(app.db.pool, hotel.id);
    const issued = (await manager.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    expect(issued).toMatchObject({ status: InvoiceStatus.ISSUED, issueDate: "2026-11-22" });
    expect(issued.number).toMatch(new RegExp(`^${issued.series}2026000000001$`));
    expect((await manager.getInvoice({ invoiceId: draft.id })).invoice).toEqual(issued);
  });

  it("checks permissions and authentication", async () => {
    const r = await stay();
    const { folio } = await viewer.getFolio({ reservationId: r.id });
    const denied = await failure(viewer.postPayment({ folioId: folio!.id, amountMinor: 1n, methodCode: "CASH" }));
    expect([denied.grpc, denied.code]).toEqual([Code.PermissionDenied, "forbidden"]);
    expect((await failure(viewer.runNightAudit({ expectedBusinessDate: "2026-11-22" }))).code).toBe("forbidden");
    expect((await failure(client().getFolio({ reservationId: r.id }))).grpc).toBe(Code.Unauthenticated);
    expect((await failure(manager.postPayment({ folioId: folio!.id, amountMinor: 1n, methodCode: "NOPE" }))).code).toBe(
      "invalid_argument",
    );
    expect((await failure(manager.getFolio({}))).code).toBe("invalid_argument");
  });

  it("serves internal clients in their granted property", async () => {
    const r = await stay();
    const { folio } = await internal.getFolio({ reservationId: r.id });
    const { payment } = await internal.postPayment({ folioId: folio!.id, amountMinor: 10_00n, methodCode: "EFT" });
    expect(payment).toMatchObject({ methodKind: "TRANSFER" });
    expect((await internal.getFolio({ propertyCode: hotel.code, folioId: folio!.id })).folio!.paymentsMinor).toBe(
      10_00n,
    );
    expect((await failure(internal.getFolio({ propertyCode: otherHotel.code, folioId: folio!.id }))).code).toBe(
      "not_found",
    );
  });

  it("answers 404 for another property's folio, payment, invoice and property", async () => {
    const r = await stay();
    const { folio } = await manager.getFolio({ reservationId: r.id });
    const { payment } = await manager.postPayment({ folioId: folio!.id, amountMinor: 5_00n, methodCode: "CASH" });
    await manager.postCharge({ folioId: folio!.id, code: "SPA", description: "Massage", amountMinor: 5_00n });
    const draft = (await manager.createInvoiceDraft({ folioId: folio!.id })).invoice!;
    for (const call of [
      () => otherManager.getFolio({ folioId: folio!.id }),
      () => otherManager.getFolio({ reservationId: r.id }),
      () => otherManager.postCharge({ folioId: folio!.id, code: "SPA", description: "x", amountMinor: 1n }),
      () => otherManager.reversePayment({ paymentId: payment!.id }),
      () => otherManager.getInvoice({ invoiceId: draft.id }),
      () => otherManager.finalizeInvoice({ invoiceId: draft.id }),
      () => otherManager.getFolio({ propertyCode: hotel.code, folioId: folio!.id }),
    ]) {
      const f = await failure(call());
      expect([f.grpc, f.code]).toEqual([Code.NotFound, "not_found"]);
    }
  });

  it("runs the night audit once per business date", async () => {
    const p = await createTestProperty(app, { businessDate: "2026-11-22" });
    const h = await seedRoomTypeAndRatePlan(app.db.pool, p);
    const audit = client((await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken);
    const room = await seedRoom(app.db.pool, h, "201");
    const guest = await seedReservation(app.db.pool, h, {
      arrival: "2026-11-22",
      departure: "2026-11-23",
      nightly: [75_00n],
      status: "IN_HOUSE",
      roomId: room,
      checkedInAt: new Date(),
    });
    const noShow = await seedReservation(app.db.pool, h, {
      arrival: "2026-11-22",
      departure: "2026-11-23",
      nightly: [75_00n],
    });
    const checks = await audit.getNightAuditChecks({});
    expect(checks).toMatchObject({ businessDate: "2026-11-22", canRun: true });
    expect(checks.checks.map((c) => [c.id, c.status, c.count])).toContainEqual([
      "arrivals_not_checked_in",
      "warning",
      1,
    ]);
    expect(checks.checks.map((c) => [c.id, c.status])).toContainEqual(["departures_not_checked_out", "ok"]);

    const res = await audit.runNightAudit({ expectedBusinessDate: "2026-11-22" });
    expect(res).toMatchObject({ previousBusinessDate: "2026-11-22", businessDate: "2026-11-23" });
    expect(res.summary).toMatchObject({
      roomChargesPosted: 1,
      roomChargesMinor: 75_00n,
      noShowsMarked: 1,
      currency: "TRY",
      amountScale: 100,
    });
    expect((await app.db.pool.query(`select status from reservations where id = $1`, [noShow.id])).rows[0].status).toBe(
      "NO_SHOW",
    );
    const moved = await failure(audit.runNightAudit({ expectedBusinessDate: "2026-11-22" }));
    expect([moved.grpc, moved.code]).toEqual([Code.FailedPrecondition, "business_date_moved"]);
    expect(
      (await audit.getFolio({ reservationId: guest.id })).folio!.charges.map((c) => [c.kind, c.amountMinor]),
    ).toEqual([[ChargeKind.ROOM, 75_00n]]);

    // The guest has not left on the new date: the audit is blocked, with the check in the details.
    const blocked = await failure(audit.runNightAudit({ expectedBusinessDate: "2026-11-23" }));
    expect(blocked.code).toBe("conflict");
    expect(blocked.details.map((d) => d.field)).toEqual(["departures_not_checked_out"]);
    expect((await audit.getNightAuditChecks({})).businessDate).toBe("2026-11-23");
  });
});
