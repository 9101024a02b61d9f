import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { FolioService, InvoiceStatus } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedInvoiceIssuer, seedReservation, seedRoomTypeAndRatePlan } from "../helpers/hotel-fixtures.ts";

// Invoices are issued in TRY only (no exchange-rate source for cac:PricingExchangeRate): a folio of a property kept
// in another currency is refused with our error body, on gRPC and Connect (CreateInvoiceDraft has no REST route).

let app: TestApp;

function clients(token: string) {
  const interceptors = [
    (next: (req: { header: Headers }) => Promise<unknown>) => (req: { header: Headers }) => {
      req.header.set("authorization", bearer(token).authorization);
      return next(req);
    },
  ] as never;
  return [
    createClient(FolioService, createGrpcTransport({ baseUrl: app.baseUrl, interceptors })),
    createClient(FolioService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors })),
  ] as const;
}

async function folioOf(currency: string): Promise<{ folioId: string; faces: ReturnType<typeof clients> }> {
  const p = await createTestProperty(app, { currency, businessDate: "2026-11-24" });
  const hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, p.id);
  const r = await seedReservation(app.db.pool, hotel, {
    arrival: "2026-11-24",
    departure: "2026-11-25",
    nightly: [100_00n],
  });
  const token = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  const faces = clients(token);
  const folio = (await faces[0].getFolio({ reservationId: r.id })).folio!;
  await faces[0].postCharge({ folioId: folio.id, code: "MINIBAR", description: "Minibar", amountMinor: 45_00n });
  return { folioId: folio.id, faces };
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe("invoice currency", () => {
  it("refuses a folio kept in EUR with 422 naming currency, on gRPC and Connect; nothing is drafted", async () => {
    const { folioId, faces } = await folioOf("EUR");
    for (const c of faces) {
      const err = await c.createInvoiceDraft({ folioId }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.InvalidArgument);
      const [info] = err!.findDetails(ErrorInfoSchema);
      expect(info?.code).toBe("validation_failed");
      expect(info?.details.map((d) => [d.field, d.reason])).toEqual([
        ["currency", "EUR: only TRY invoices are issued"],
      ]);
    }
    const drafts = await app.db.pool.query("select count(*)::int as n from invoices where folio_id = $1", [folioId]);
    expect(drafts.rows[0].n).toBe(0);
  });

  it("drafts and issues a TRY folio's invoice with DocumentCurrencyCode TRY", async () => {
    const { folioId, faces } = await folioOf("TRY");
    const draft = (await faces[1].createInvoiceDraft({ folioId })).invoice!;
    const issued = (await faces[0].finalizeInvoice({ invoiceId: draft.id })).invoice!;
    expect([issued.status, issued.currency]).toEqual([InvoiceStatus.ISSUED, "TRY"]);
    const xml = new TextDecoder().decode(
      (await faces[0].getInvoiceDocument({ invoiceId: issued.id, format: "xml" })).content,
    );
    expect(xml).toContain("<cbc:DocumentCurrencyCode>TRY</cbc:DocumentCurrencyCode>");
  });
});
