import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { rpcClient, rpcFailure, rpcFaces } from "./faces.ts";

// Payments beyond the open balance are a credit within the money bound; money goes back only as a refund linked
// to the payment it refunds. FolioService has no REST route: Connect and gRPC.

const BOUND = 10n ** 13n;

let app: TestApp;
let hotel: SeededProperty;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { code: "PAY-1", businessDate: "2026-11-22" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  token = (await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

async function newFolio(face: (typeof rpcFaces)[number]) {
  const r = await seedReservation(app.db.pool, hotel, {
    arrival: "2026-11-22",
    departure: "2026-11-23",
    nightly: [100_00n],
  });
  const folios = rpcClient(app.baseUrl, face, FolioService, token);
  const { folio } = await folios.getFolio({ reservationId: r.id });
  return { folios, folioId: folio!.id };
}

async function paymentEvents(folioId: string): Promise<Record<string, unknown>[]> {
  const { rows } = await app.db.pool.query<{ data: Record<string, unknown> }>(
    `select data from domain_events where type = 'folio.payment_posted' and data->>'folioId' = $1 order by occurred_at, id`,
    [folioId],
  );
  return rows.map((r) => r.data);
}

describe.each(rpcFaces)("payments and refunds over %s", (face) => {
  it("a payment beyond the open balance is a credit, shown as such, and only within the money bound", async () => {
    const { folios, folioId } = await newFolio(face);
    await folios.postCharge({ folioId, code: "MINIBAR", description: "Water", amountMinor: 100_00n });
    await folios.postPayment({ folioId, amountMinor: 150_00n, methodCode: "CARD" });
    expect((await folios.getFolio({ folioId })).folio).toMatchObject({ balanceMinor: -50_00n, creditMinor: 50_00n });
    // a deposit up to the bound is taken...
    await folios.postPayment({ folioId, amountMinor: BOUND - 50_00n, methodCode: "TRANSFER" });
    expect((await folios.getFolio({ folioId })).folio).toMatchObject({ balanceMinor: -BOUND, creditMinor: BOUND });
    // ...one minor unit more is refused, naming the field; nothing was posted
    expect(await rpcFailure(folios.postPayment({ folioId, amountMinor: 1n, methodCode: "CASH" }))).toMatchObject({
      code: "invalid_argument",
      fields: ["amountMinor"],
    });
    expect((await folios.getFolio({ folioId })).folio!.payments).toHaveLength(2);
  });

  it("a refund is a negative payment linked to the payment it refunds, never more than that payment", async () => {
    const { folios, folioId } = await newFolio(face);
    const { payment } = await folios.postPayment({ folioId, amountMinor: 500_00n, methodCode: "VISA" });
    const { refund } = await folios.refundPayment({
      paymentId: payment!.id,
      amountMinor: 300_00n,
      reference: "deposit",
    });
    expect(refund).toMatchObject({
      amountMinor: -300_00n,
      reversedPaymentId: payment!.id,
      methodCode: "VISA",
      refundedMinor: 0n,
    });
    // more than is left of the payment (200.00) is refused
    expect(await rpcFailure(folios.refundPayment({ paymentId: payment!.id, amountMinor: 200_01n }))).toMatchObject({
      code: "validation_failed",
      fields: ["amountMinor"],
    });
    // a refund is not refunded; zero or negative amounts are not refunds
    expect((await rpcFailure(folios.refundPayment({ paymentId: refund!.id, amountMinor: 1n }))).code).toBe(
      "invalid_transition",
    );
    expect((await rpcFailure(folios.refundPayment({ paymentId: payment!.id, amountMinor: -5n }))).fields).toEqual([
      "amountMinor",
    ]);
    // the rest goes back with ReversePayment; then nothing is left
    const { reversal } = await folios.reversePayment({ paymentId: payment!.id });
    expect(reversal).toMatchObject({ amountMinor: -200_00n, reversedPaymentId: payment!.id });
    expect((await rpcFailure(folios.reversePayment({ paymentId: payment!.id }))).code).toBe("invalid_transition");
    expect((await rpcFailure(folios.refundPayment({ paymentId: payment!.id, amountMinor: 1n }))).code).toBe(
      "validation_failed",
    );
    const folio = (await folios.getFolio({ folioId })).folio!;
    expect(folio).toMatchObject({ paymentsMinor: 0n, balanceMinor: 0n, creditMinor: 0n });
    expect(folio.payments.find((p) => p.id === payment!.id)).toMatchObject({
      refundedMinor: 500_00n,
      reversedByPaymentId: reversal!.id,
    });
    expect(await paymentEvents(folioId)).toMatchObject([
      { paymentId: payment!.id, amountMinor: 500_00, isReversal: false, reversedPaymentId: null },
      { paymentId: refund!.id, amountMinor: -300_00, isReversal: true, reversedPaymentId: payment!.id },
      { paymentId: reversal!.id, amountMinor: -200_00, isReversal: true, reversedPaymentId: payment!.id },
    ]);
  });
});
