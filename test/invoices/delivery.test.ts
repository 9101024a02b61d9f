import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuditService } from "../../gen/hotelops/audit/v1/audit_pb.js";
import { FolioService, InvoiceStatus, type Invoice } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedInvoiceIssuer, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { integratorEnv, startIntegratorReceiver, type IntegratorReceiver } from "../helpers/integrator-receiver.ts";
import { until } from "../helpers/service-process.ts";
import { validateUblInvoice } from "../helpers/ubl.ts";
import { deliveryAudit, failure, folioClients, istanbulToday, stayWithCharges } from "./fixtures.ts";

// E-documents sent through the HTTP integrator client to a loopback receiver that plays the integrator: accepted,
// rejected and re-sent after a fix, retried after 5xx answers and timeouts, cancelled; every step audited.
let app: TestApp;
let receiver: IntegratorReceiver;
let hotel: SeededProperty;
let grpc: Client<typeof FolioService>;
let connect: Client<typeof FolioService>;
let managerToken: string;

beforeAll(async () => {
  receiver = await startIntegratorReceiver();
  app = await startTestApp({ env: integratorEnv(receiver) });
  const p = await createTestProperty(app, { businessDate: istanbulToday() });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  await seedInvoiceIssuer(app.db.pool, hotel.id);
  const token = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  ({ grpc, connect } = folioClients(app.baseUrl, token));
  managerToken = (await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken;
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function issue(c: Client<typeof FolioService>): Promise<Invoice> {
  const folioId = await stayWithCharges(app, hotel, istanbulToday());
  const draft = (await c.createInvoiceDraft({ folioId })).invoice!;
  return (await c.finalizeInvoice({ invoiceId: draft.id })).invoice!;
}

/** The invoice once its delivery is in `status` (read on the given face). */
function deliveryIn(c: Client<typeof FolioService>, invoiceId: string, status: string): Promise<Invoice> {
  return until(
    async () => {
      const i = (await c.getInvoice({ invoiceId })).invoice!;
      return i.delivery?.status === status ? i : undefined;
    },
    20_000,
    `delivery ${status}`,
  );
}

describe("the e-Fatura registry through the integrator", () => {
  const company = {
    kind: "COMPANY",
    vkn: "9876543217",
    title: "Güneş Seyahat Ltd. Şti.",
    taxOffice: "Çankaya",
    address: { street: "Atatürk Bulvarı 5", city: "Ankara", countryCode: "TR" },
    eFatura: false,
    lookUpEFatura: true,
  };

  it("decides a company buyer's e-Fatura flag when asked; an operator's flag true wins (gRPC, Connect)", async () => {
    receiver.registry.set("9876543217", true);
    receiver.registry.set("1234567890", false);
    for (const c of [grpc, connect]) {
      const registered = (
        await c.createInvoiceDraft({ folioId: await stayWithCharges(app, hotel, istanbulToday()), buyer: company })
      ).invoice!;
      expect(registered).toMatchObject({
        type: "E_FATURA",
        profileId: "TEMELFATURA",
        buyer: { eFatura: true, eFaturaSource: "registry" },
      });
      const other = { ...company, vkn: "1234567890" };
      const notRegistered = (
        await c.createInvoiceDraft({ folioId: await stayWithCharges(app, hotel, istanbulToday()), buyer: other })
      ).invoice!;
      expect(notRegistered).toMatchObject({
        type: "E_ARSIV",
        profileId: "EARSIVFATURA",
        buyer: { eFatura: false, eFaturaSource: "registry" },
      });
      const before = receiver.requests.length;
      const operator = (
        await c.createInvoiceDraft({
          folioId: await stayWithCharges(app, hotel, istanbulToday()),
          buyer: { ...other, eFatura: true },
        })
      ).invoice!;
      expect(operator).toMatchObject({ type: "E_FATURA", buyer: { eFatura: true, eFaturaSource: "operator" } });
      expect(receiver.requests.slice(before)).toEqual([]);
    }
    expect(receiver.requests.filter((r) => r.startsWith("GET /registry/"))).toEqual([
      "GET /registry/9876543217",
      "GET /registry/1234567890",
      "GET /registry/9876543217",
      "GET /registry/1234567890",
    ]);
    // the draft's audit entry records where the flag came from (the buyer itself is masked there)
    const audit = await app.db.pool.query<{ source: string }>(
      `select (select c->>'after' from jsonb_array_elements(changes) c where c->>'field' = 'eFaturaSource') as source
       from audit_changes where property_id = $1 and entity_type = 'invoice' and action = 'create' order by at, id`,
      [hotel.id],
    );
    expect(audit.rows.map((r) => r.source).slice(-3)).toEqual(["registry", "registry", "operator"]);
  });
});

describe("e-document delivery", () => {
  it.each([
    ["gRPC", () => grpc],
    ["Connect", () => connect],
  ])(
    "%s: finalize queues the document with the issue; it is SENT, then ACCEPTED when the integrator says so",
    async (_face, c) => {
      receiver.script.push("receive");
      const issued = await issue(c());
      // the delivery row and its job committed with the issue
      expect(issued.delivery).toMatchObject({ status: "QUEUED" });
      const sent = await deliveryIn(c(), issued.id, "SENT");
      expect(sent.delivery).toMatchObject({ attempts: 1, lastError: "" });
      expect(sent.delivery?.sentAt).toBeDefined();
      const doc = receiver.documents.get(issued.ettn!)!;
      expect(doc.xml).toContain(`<cbc:ID>${issued.number}</cbc:ID>`);
      expect(await validateUblInvoice(doc.xml)).toBe("");
      // the integrator decides later; the status poll sees it
      doc.status = "ACCEPTED";
      const accepted = await deliveryIn(c(), issued.id, "ACCEPTED");
      expect(accepted.delivery?.decidedAt).toBeDefined();
      expect(accepted.status).toBe(InvoiceStatus.ISSUED);
      expect(doc.created).toBe(1);
      expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "send", "accept"]);
    },
  );

  it("a SENT document the integrator rejects later is REJECTED with its reason", async () => {
    receiver.script.push("receive");
    const issued = await issue(connect);
    await deliveryIn(connect, issued.id, "SENT");
    const doc = receiver.documents.get(issued.ettn!)!;
    doc.status = "REJECTED";
    doc.reason = "Alıcı e-Fatura mükellefi değil";
    const rejected = await deliveryIn(grpc, issued.id, "REJECTED");
    expect(rejected.delivery).toMatchObject({ reason: "Alıcı e-Fatura mükellefi değil", attempts: 1 });
    expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "send", "reject"]);
  });

  it("retries 5xx answers and timeouts with backoff; the integrator holds one document for the ETTN", async () => {
    receiver.script.push("error", "hang", "error", "accept");
    const issued = await issue(grpc);
    const accepted = await deliveryIn(grpc, issued.id, "ACCEPTED");
    expect(accepted.delivery?.attempts).toBe(4);
    expect(accepted.delivery?.lastError).toBe("");
    const doc = receiver.documents.get(issued.ettn!)!;
    // the upload that timed out had reached the integrator: the later ones were the same document
    expect([doc.created, doc.uploads]).toEqual([1, 2]);
    receiver.release();
    expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "send", "accept"]);
  });

  it("a REJECTED document is sent again after a fix (same ETTN, the document made anew), on every face", async () => {
    for (const c of [grpc, connect]) {
      receiver.script.push("reject");
      const issued = await issue(c);
      const rejected = await deliveryIn(c, issued.id, "REJECTED");
      expect(rejected.delivery?.reason).toBe("Satıcı unvanı GİB kaydıyla uyuşmuyor");
      // the fix: the issuer's title as GİB has it
      const title = `Demo Turizm ve Otelcilik A.Ş. ${c === grpc ? "G" : "C"}`;
      await c.setInvoiceIssuer({
        vkn: "1234567890",
        title,
        taxOffice: "Beyoğlu",
        address: { street: "İstiklal Caddesi 1", district: "Beyoğlu", city: "İstanbul", countryCode: "TR" },
      });
      const requeued = (await c.requeueInvoiceDelivery({ invoiceId: issued.id })).invoice!;
      expect(requeued.delivery).toMatchObject({ status: "QUEUED", reason: "" });
      const accepted = await deliveryIn(c, issued.id, "ACCEPTED");
      expect(accepted.ettn).toBe(issued.ettn);
      const doc = receiver.documents.get(issued.ettn!)!;
      expect(doc.xml).toContain(title);
      expect(await validateUblInvoice(doc.xml)).toBe("");
      const stored = new TextDecoder().decode(
        (await c.getInvoiceDocument({ invoiceId: issued.id, format: "xml" })).content,
      );
      expect(stored).toBe(doc.xml);
      expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual([
        "queue",
        "reject",
        "requeue",
        "send",
        "accept",
      ]);
      // the trail's own face shows who did what: the job uploads and records answers, staff re-queue
      for (const transport of [
        createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
        createGrpcTransport({ baseUrl: app.baseUrl }),
      ]) {
        const page = await createClient(AuditService, transport).listChanges(
          { entityType: "invoice_delivery", entityId: issued.id },
          { headers: bearer(managerToken) },
        );
        const byAction = new Map(page.changes.map((ch) => [ch.action, ch]));
        expect(byAction.get("send")).toMatchObject({ face: "job", actor: { id: "invoices.delivery" } });
        expect(byAction.get("requeue")).toMatchObject({ face: c === grpc ? "grpc" : "connect" });
        const status = byAction.get("reject")!.changes.find((f) => f.field === "status")!;
        expect(status.after?.kind).toEqual({ case: "stringValue", value: "REJECTED" });
      }
      // only a REJECTED delivery is sent again
      const again = await failure(c.requeueInvoiceDelivery({ invoiceId: issued.id }));
      expect([again.grpc, again.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
      const bad = await failure(c.requeueInvoiceDelivery({ invoiceId: "nope" }));
      expect([bad.grpc, bad.code, bad.fields]).toEqual([Code.InvalidArgument, "invalid_argument", ["invoiceId"]]);
    }
  });

  it("cancelling a sent e-Arşiv invoice cancels it at the integrator (CANCELLING -> CANCELLED), on every face", async () => {
    for (const c of [grpc, connect]) {
      const issued = await issue(c);
      await deliveryIn(c, issued.id, "ACCEPTED");
      const cancelled = (await c.cancelInvoice({ invoiceId: issued.id, reason: "Yanlış misafire kesildi" })).invoice!;
      expect(cancelled.status).toBe(InvoiceStatus.CANCELLED);
      expect(cancelled.delivery?.status).toBe("CANCELLING");
      await deliveryIn(c, issued.id, "CANCELLED");
      expect(receiver.documents.get(issued.ettn!)?.status).toBe("CANCELLED");
      expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual([
        "queue",
        "send",
        "accept",
        "cancel",
        "cancelled",
      ]);
    }
  });

  it("a cancellation while the upload is in flight still ends with the document cancelled at the integrator", async () => {
    receiver.script.push("hang");
    const issued = await issue(connect);
    await until(async () => receiver.documents.get(issued.ettn!)?.uploads === 1, 10_000, "the upload");
    // an upload was started: the document may be at the integrator, so it is cancelled there
    const cancelled = (await grpc.cancelInvoice({ invoiceId: issued.id, reason: "Mükerrer" })).invoice!;
    expect(cancelled.delivery).toMatchObject({ status: "CANCELLING", attempts: 1 });
    receiver.release();
    await deliveryIn(grpc, issued.id, "CANCELLED");
    expect(receiver.documents.get(issued.ettn!)).toMatchObject({ status: "CANCELLED", created: 1 });
    expect(receiver.requests.filter((r) => r.includes(issued.ettn!))).toEqual([
      `PUT /documents/${issued.ettn}`,
      `POST /documents/${issued.ettn}/cancel`,
    ]);
    expect(await deliveryAudit(app.db.pool, hotel.id, issued.id)).toEqual(["queue", "cancel", "cancelled"]);
  });

  it("validates the integrator settings at start", () => {
    const base = { DATABASE_URL: "postgres://x@127.0.0.1/db" };
    expect(() => loadConfig({ ...base, EDOCUMENT_INTEGRATOR_URL: "ftp://integrator" })).toThrow(
      /EDOCUMENT_INTEGRATOR_URL must be an http/,
    );
    expect(() => loadConfig({ ...base, EDOCUMENT_INTEGRATOR_URL: "https://integrator.example" })).toThrow(
      /EDOCUMENT_INTEGRATOR_TOKEN is required/,
    );
    expect(() => loadConfig({ ...base, EDOCUMENT_INTEGRATOR_TOKEN: "t" })).toThrow(/needs EDOCUMENT_INTEGRATOR_URL/);
    expect(() =>
      loadConfig({
        ...base,
        NODE_ENV: "production",
        EDOCUMENT_INTEGRATOR_URL: "http://integrator.example",
        EDOCUMENT_INTEGRATOR_TOKEN: "t",
      }),
    ).toThrow(/must be https:\/\/ when NODE_ENV=production/);
    expect(() =>
      loadConfig({
        ...base,
        EDOCUMENT_INTEGRATOR_URL: "https://integrator.example",
        EDOCUMENT_INTEGRATOR_TOKEN: "t",
        EDOCUMENT_INTEGRATOR_TIMEOUT_MS: "60000",
        EDOCUMENT_INTEGRATOR_RETRY_DELAY_SECONDS: "30",
        EDOCUMENT_INTEGRATOR_RETRY_DELAY_MAX_SECONDS: "10",
      }),
    ).toThrow(/TIMEOUT_MS must be an integer from 100 to 30000[\s\S]*RETRY_DELAY_MAX_SECONDS must be at least/);
    const ok = loadConfig({
      ...base,
      EDOCUMENT_INTEGRATOR_URL: "https://integrator.example",
      EDOCUMENT_INTEGRATOR_TOKEN: "t",
    });
    expect(ok.edocumentIntegrator).toEqual({
      url: "https://integrator.example",
      token: "t",
      timeoutMs: 10_000,
      retryLimit: 20,
      retryDelaySeconds: 10,
      retryDelayMaxSeconds: 600,
      pollSeconds: 60,
    });
    expect(loadConfig(base).edocumentIntegrator).toBeUndefined();
  });
});
