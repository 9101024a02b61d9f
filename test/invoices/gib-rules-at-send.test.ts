import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { FolioService, InvoiceStatus } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedInvoiceIssuer, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { integratorEnv, startIntegratorReceiver, type IntegratorReceiver } from "../helpers/integrator-receiver.ts";
import { until } from "../helpers/service-process.ts";
import { addDays, deliveryAudit, folioClients, istanbulToday, stayWithCharges } from "./fixtures.ts";

// GİB's UBL-TR rules run by the delivery job before each upload (compiled once when the worker starts): a document
// that breaks one is never sent; its delivery is REJECTED with the rule in `reason`, audited as the job's. The rule
// broken here is GİB's "IssueDate not after today": a property whose business date runs ahead of Turkey's date.
let app: TestApp;
let receiver: IntegratorReceiver;
let ahead: SeededProperty;
let today: SeededProperty;
let broken: SeededProperty;
const faces: Record<string, Record<"grpc" | "connect", Client<typeof FolioService>>> = {};

async function hotel(businessDate: string): Promise<SeededProperty> {
  const p = await createTestProperty(app, { businessDate });
  const h = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, h.id);
  const token = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  faces[h.id] = folioClients(app.baseUrl, token);
  return h;
}

beforeAll(async () => {
  receiver = await startIntegratorReceiver();
  app = await startTestApp({ env: integratorEnv(receiver) });
  // two days ahead: after Turkey's date and after the UTC date, whatever the hour
  ahead = await hotel(addDays(istanbulToday(), 2));
  today = await hotel(istanbulToday());
  broken = await hotel(istanbulToday());
  // an issuer's tax number GİB's rules refuse (one stored before today's checks, say): 9 digits
  await app.db.pool.query("update invoice_issuers set vkn = '123456789' where property_id = $1", [broken.id]);
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

describe("GİB's rules at finalize", () => {
  for (const face of ["grpc", "connect"] as const)
    it(`${face}: a document that breaks one is never issued: refused naming the rule, the draft kept, no number used`, async () => {
      const c = faces[broken.id]![face];
      const folioId = await stayWithCharges(app, broken, addDays(istanbulToday(), -2));
      const draft = (await c.createInvoiceDraft({ folioId })).invoice!;
      const refused = (await c.finalizeInvoice({ invoiceId: draft.id }).catch((e: unknown) => e)) as ConnectError;
      expect(refused).toBeInstanceOf(ConnectError);
      expect(refused.code).toBe(Code.InvalidArgument);
      expect(refused.rawMessage).toMatch(/^The e-document would break GİB UBL-TR rule .+\. Nothing was issued\.$/);
      const kept = (await c.getInvoice({ invoiceId: draft.id })).invoice!;
      expect(kept.status).toBe(InvoiceStatus.DRAFT);
      expect(kept.number ?? "").toBe("");
      const documents = await app.db.pool.query("select 1 from invoice_documents where invoice_id = $1", [draft.id]);
      expect(documents.rowCount).toBe(0);
    });
});

describe("GİB's rules before the upload", () => {
  for (const face of ["grpc", "connect"] as const)
    it(`${face}: a document dated after today is REJECTED naming the rule and never sent`, async () => {
      const c = faces[ahead.id]![face];
      const folioId = await stayWithCharges(app, ahead, addDays(istanbulToday(), 1));
      const draft = (await c.createInvoiceDraft({ folioId })).invoice!;
      const issued = (await c.finalizeInvoice({ invoiceId: draft.id })).invoice!;
      expect(issued.status).toBe(InvoiceStatus.ISSUED);
      const rejected = await until(
        async () => {
          const i = (await c.getInvoice({ invoiceId: issued.id })).invoice!;
          return i.delivery?.status === "REJECTED" ? i : undefined;
        },
        20_000,
        "delivery REJECTED",
      );
      expect(rejected.delivery!.reason).toMatch(/^GİB UBL-TR rule \/\/cbc:IssueDate: Geçersiz cbc:IssueDate değeri/);
      expect(rejected.delivery!.reason).toContain(addDays(istanbulToday(), 2));
      expect(receiver.documents.has(issued.ettn!)).toBe(false);
      expect(await deliveryAudit(app.db.pool, ahead.id, issued.id)).toEqual(["queue", "reject"]);
      const author = await app.db.pool.query(
        `select face, actor_id from audit_changes where entity_type = 'invoice_delivery' and entity_id = $1 and action = 'reject'`,
        [issued.id],
      );
      expect(author.rows).toEqual([{ face: "job", actor_id: "invoices.delivery" }]);
    });

  it("a document dated today passes them and is sent (ACCEPTED)", async () => {
    const c = faces[today.id]!.grpc;
    const folioId = await stayWithCharges(app, today, addDays(istanbulToday(), -2));
    const draft = (await c.createInvoiceDraft({ folioId })).invoice!;
    const issued = (await c.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const sent = await until(
      async () => {
        const i = (await c.getInvoice({ invoiceId: issued.id })).invoice!;
        return i.delivery?.status === "ACCEPTED" ? i : undefined;
      },
      20_000,
      "delivery ACCEPTED",
    );
    expect(sent.delivery!.reason).toBe("");
    expect(receiver.documents.get(issued.ettn!)?.uploads).toBe(1);
  });
});
