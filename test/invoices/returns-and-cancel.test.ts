import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type Client } from "@connectrpc/connect";
import pg from "pg";
import { FolioService, InvoiceStatus, type Invoice } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedInvoiceIssuer, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { validateUblInvoice } from "../helpers/ubl.ts";
import { validateUblTr } from "../helpers/ubl-tr.ts";
import { pdfText } from "../helpers/pdf.ts";
import { addDays, deliveryAudit, failure, folioClients, istanbulToday, stayWithCharges } from "./fixtures.ts";

// Return invoices (IADE) and e-Arşiv cancellation on gRPC and Connect (REST for the documents), with a service that
// has no integrator configured: issued documents stay QUEUED, never uploaded, so a cancellation ends them at once.
let app: TestApp;
let hotel: SeededProperty;
let token: string;
let grpc: Client<typeof FolioService>;
let connect: Client<typeof FolioService>;
let viewer: Client<typeof FolioService>;
let other: Client<typeof FolioService>;
const faces = [
  ["gRPC", () => grpc],
  ["Connect", () => connect],
] as const;

const eFaturaCompany = {
  kind: "COMPANY",
  vkn: "9876543217",
  title: "Güneş Seyahat Ltd. Şti.",
  taxOffice: "Çankaya",
  address: { street: "Atatürk Bulvarı 5", district: "Çankaya", city: "Ankara", postalZone: "06690", countryCode: "TR" },
  eFatura: true,
};

async function setBusinessDate(pool: pg.Pool, propertyId: string, date: string): Promise<void> {
  await pool.query(`update properties set business_date = $2 where id = $1`, [propertyId, date]);
}

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: istanbulToday() });
  const q = await createTestProperty(app, { businessDate: istanbulToday() });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  token = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  ({ grpc, connect } = folioClients(app.baseUrl, token));
  viewer = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: p.code, role: "viewer" })).accessToken,
  ).grpc;
  other = folioClients(
    app.baseUrl,
    (await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken,
  ).connect;
});
afterAll(async () => {
  await app?.close();
});

/** An issued invoice of a new folio: line 1 two room nights (3000.00), line 2 a minibar charge (45.00). */
async function issue(c: Client<typeof FolioService>, buyer?: typeof eFaturaCompany): Promise<Invoice> {
  const folioId = await stayWithCharges(app, hotel, istanbulToday());
  const draft = (await c.createInvoiceDraft({ folioId, ...(buyer ? { buyer } : {}) })).invoice!;
  return (await c.finalizeInvoice({ invoiceId: draft.id })).invoice!;
}

async function invoiceAudit(invoiceId: string): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ action: string }>(
    `select action from audit_changes where property_id = $1 and entity_type = 'invoice' and entity_id = $2 order by at, id`,
    [hotel.id, invoiceId],
  );
  return rows.map((r) => r.action);
}

const xmlOf = async (c: Client<typeof FolioService>, invoiceId: string) =>
  new TextDecoder().decode((await c.getInvoiceDocument({ invoiceId, format: "xml" })).content);

describe("return invoices (IADE)", () => {
  it.each(faces)(
    "%s: returns some lines of an invoice; the document names the original and validates",
    async (_f, c) => {
      const original = await issue(c());
      const draft = (await c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [2] })).invoice!;
      expect(draft).toMatchObject({
        status: InvoiceStatus.DRAFT,
        typeCode: "IADE",
        type: "E_ARSIV",
        profileId: "EARSIVFATURA",
        returnOfInvoiceId: original.id,
        totalMinor: 45_00n,
        chargeIds: [],
      });
      expect(draft.lines.map((l) => [l.lineNo, l.chargeCode, l.totalMinor, l.vatMinor])).toEqual([
        [1, "MINIBAR", 45_00n, original.lines[1]!.vatMinor],
      ]);
      expect(draft.buyer).toEqual(original.buyer);
      const issued = (await c().finalizeInvoice({ invoiceId: draft.id })).invoice!;
      expect(issued.number).not.toBe(original.number);
      expect(issued.ettn).not.toBe(original.ettn);
      expect(issued.delivery?.status).toBe("QUEUED");
      const xml = await xmlOf(c(), issued.id);
      expect(await validateUblInvoice(xml)).toBe("");
      expect(validateUblTr(xml)).toEqual([]);
      expect(xml).toContain("<cbc:InvoiceTypeCode>IADE</cbc:InvoiceTypeCode>");
      expect(xml).toContain(
        `<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${original.number}</cbc:ID><cbc:IssueDate>${original.issueDate}</cbc:IssueDate>`,
      );
      const viaRest = await fetch(`${app.baseUrl}/api/mobile/v1/invoices/${issued.id}/document?format=xml`, {
        headers: bearer(token),
      });
      expect(viaRest.status).toBe(200);
      const body = (await viaRest.json()) as { content: string };
      expect(Buffer.from(body.content, "base64").toString("utf8")).toBe(xml);
      const pdf = await pdfText((await c().getInvoiceDocument({ invoiceId: issued.id, format: "pdf" })).content);
      expect(pdf).toContain(`İade edilen fatura: ${original.number} (${original.issueDate})`);
      expect(await invoiceAudit(issued.id)).toEqual(["create_return", "issue"]);
      // a line is returned once; the other line still can be
      const twice = await failure(c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [2] }));
      expect([twice.grpc, twice.code]).toEqual([Code.FailedPrecondition, "conflict"]);
      const all = await failure(c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [] }));
      expect(all.code).toBe("conflict");
      const rest = (await c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [1] })).invoice!;
      expect(rest.lines.map((l) => [l.chargeCode, l.quantity, l.totalMinor])).toEqual([["ROOM", 2, 3000_00n]]);
    },
  );

  it("returns an e-Fatura as an e-Fatura (TEMELFATURA, IADE), all lines when none are named", async () => {
    const original = await issue(grpc, eFaturaCompany);
    const draft = (await connect.createReturnInvoiceDraft({ invoiceId: original.id })).invoice!;
    expect(draft).toMatchObject({ type: "E_FATURA", profileId: "TEMELFATURA", totalMinor: original.totalMinor });
    const issued = (await grpc.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const xml = await xmlOf(grpc, issued.id);
    expect(await validateUblInvoice(xml)).toBe("");
    expect(validateUblTr(xml)).toEqual([]);
    expect(xml).toContain("<cbc:ProfileID>TEMELFATURA</cbc:ProfileID>");
    // an e-Fatura is corrected with a return, never cancelled here
    const refused = await failure(grpc.cancelInvoice({ invoiceId: original.id, reason: "hata" }));
    expect([refused.grpc, refused.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
  });

  it.each(faces)(
    "%s: refuses drafts, returns of returns, unknown lines, other properties and callers without invoices.issue",
    async (_f, c) => {
      const original = await issue(c());
      const folioId = await stayWithCharges(app, hotel, istanbulToday());
      const draft = (await c().createInvoiceDraft({ folioId })).invoice!;
      const ofDraft = await failure(c().createReturnInvoiceDraft({ invoiceId: draft.id }));
      expect([ofDraft.grpc, ofDraft.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
      const unknown = await failure(c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [1, 9] }));
      expect([unknown.grpc, unknown.code, unknown.fields]).toEqual([
        Code.InvalidArgument,
        "validation_failed",
        ["lineNos"],
      ]);
      expect((await failure(c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [0] }))).fields).toEqual([
        "lineNos",
      ]);
      const badId = await failure(c().createReturnInvoiceDraft({ invoiceId: "x" }));
      expect([badId.code, badId.fields]).toEqual(["invalid_argument", ["invoiceId"]]);
      const ret = (await c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [1] })).invoice!;
      const issuedReturn = (await c().finalizeInvoice({ invoiceId: ret.id })).invoice!;
      const ofReturn = await failure(c().createReturnInvoiceDraft({ invoiceId: issuedReturn.id }));
      expect(ofReturn.code).toBe("invalid_transition");
      const elsewhere = await failure(other.createReturnInvoiceDraft({ invoiceId: original.id }));
      expect([elsewhere.grpc, elsewhere.code]).toEqual([Code.NotFound, "not_found"]);
      const denied = await failure(viewer.createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [2] }));
      expect(denied.grpc).toBe(Code.PermissionDenied);
    },
  );
});

describe("e-Arşiv cancellation", () => {
  it.each(faces)(
    "%s: cancels within the window; the charges are open again and the unsent document is cancelled",
    async (_f, c) => {
      const issued = await issue(c());
      const cancelled = (await c().cancelInvoice({ invoiceId: issued.id, reason: "  Yanlış folyo  " })).invoice!;
      expect(cancelled).toMatchObject({ status: InvoiceStatus.CANCELLED, cancelReason: "Yanlış folyo" });
      expect(cancelled.number).toBe(issued.number);
      expect(cancelled.cancelledAt).toBeDefined();
      // never uploaded (no integrator here): nothing to cancel there
      expect(cancelled.delivery?.status).toBe("CANCELLED");
      expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "cancel"]);
      expect(await invoiceAudit(issued.id)).toEqual(["create", "issue", "cancel"]);
      const folio = (await c().getFolio({ folioId: issued.folioId })).folio!;
      expect(folio.charges.every((ch) => ch.invoiceId === undefined)).toBe(true);
      const again = (await c().createInvoiceDraft({ folioId: issued.folioId })).invoice!;
      expect(again.chargeIds).toEqual(issued.chargeIds);
      expect((await c().getInvoice({ invoiceId: issued.id })).invoice?.status).toBe(InvoiceStatus.CANCELLED);
      const twice = await failure(c().cancelInvoice({ invoiceId: issued.id, reason: "tekrar" }));
      expect([twice.grpc, twice.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
      const ofDraft = await failure(c().cancelInvoice({ invoiceId: again.id, reason: "taslak" }));
      expect(ofDraft.code).toBe("invalid_transition");
      // a cancelled invoice is not returned, and its document stays readable
      expect((await failure(c().createReturnInvoiceDraft({ invoiceId: issued.id }))).code).toBe("invalid_transition");
      expect(await xmlOf(c(), issued.id)).toContain(issued.ettn!);
    },
  );

  it("the window: 7 days after the issue date (Turkish time), then a return invoice is the way", async () => {
    const today = istanbulToday();
    try {
      await setBusinessDate(app.db.pool, hotel.id, addDays(today, -7));
      const lastDay = await issue(grpc);
      await setBusinessDate(app.db.pool, hotel.id, addDays(today, -8));
      const late = await issue(grpc);
      for (const c of [grpc, connect]) {
        const refused = await failure(c.cancelInvoice({ invoiceId: late.id, reason: "geç" }));
        expect([refused.grpc, refused.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
      }
      expect((await connect.cancelInvoice({ invoiceId: lastDay.id, reason: "son gün" })).invoice?.status).toBe(
        InvoiceStatus.CANCELLED,
      );
      expect((await grpc.createReturnInvoiceDraft({ invoiceId: late.id })).invoice?.typeCode).toBe("IADE");
    } finally {
      await setBusinessDate(app.db.pool, hotel.id, today);
    }
  });

  it.each(faces)(
    "%s: a return's cancellation gives its lines back; an original with an issued return is not cancelled",
    async (_f, c) => {
      const original = await issue(c());
      const ret = (await c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [2] })).invoice!;
      const issuedReturn = (await c().finalizeInvoice({ invoiceId: ret.id })).invoice!;
      const blocked = await failure(c().cancelInvoice({ invoiceId: original.id, reason: "iptal" }));
      expect(blocked.code).toBe("invalid_transition");
      await c().cancelInvoice({ invoiceId: issuedReturn.id, reason: "iade iptal" });
      const again = (await c().createReturnInvoiceDraft({ invoiceId: original.id, lineNos: [2] })).invoice!;
      expect(again.totalMinor).toBe(45_00n);
      // the original cancelled meanwhile: its return draft is not issued
      await c().cancelInvoice({ invoiceId: original.id, reason: "iptal" });
      const stale = await failure(c().finalizeInvoice({ invoiceId: again.id }));
      expect(stale.code).toBe("invalid_transition");
    },
  );

  it.each(faces)("%s: checks the reason (422), the property (404) and the permission", async (_f, c) => {
    const issued = await issue(c());
    const empty = await failure(c().cancelInvoice({ invoiceId: issued.id, reason: " " }));
    expect([empty.grpc, empty.code, empty.fields]).toEqual([Code.InvalidArgument, "validation_failed", ["reason"]]);
    expect((await failure(c().cancelInvoice({ invoiceId: issued.id, reason: "x".repeat(201) }))).fields).toEqual([
      "reason",
    ]);
    expect((await failure(other.cancelInvoice({ invoiceId: issued.id, reason: "başka otel" }))).grpc).toBe(
      Code.NotFound,
    );
    expect((await failure(viewer.cancelInvoice({ invoiceId: issued.id, reason: "izin yok" }))).grpc).toBe(
      Code.PermissionDenied,
    );
    expect((await failure(viewer.requeueInvoiceDelivery({ invoiceId: issued.id }))).grpc).toBe(Code.PermissionDenied);
    // a QUEUED delivery (its retries spent) gets a new job, its document unchanged
    const jobs = async () =>
      (
        await app.db.pool.query<{ n: number }>(
          `select count(*)::int as n from pgboss.job where name = 'invoices.delivery' and data->>'invoiceId' = $1`,
          [issued.id],
        )
      ).rows[0]!.n;
    expect(await jobs()).toBe(1);
    const xml = await xmlOf(c(), issued.id);
    const requeued = (await c().requeueInvoiceDelivery({ invoiceId: issued.id })).invoice!;
    expect(requeued.delivery?.status).toBe("QUEUED");
    expect(await jobs()).toBe(2);
    expect(await xmlOf(c(), issued.id)).toBe(xml);
    expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "requeue"]);
    // a cancelled one is not
    await c().cancelInvoice({ invoiceId: issued.id, reason: "iptal" });
    expect((await failure(c().requeueInvoiceDelivery({ invoiceId: issued.id }))).code).toBe("invalid_transition");
  });
});
