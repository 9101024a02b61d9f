import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { FolioService, InvoiceStatus } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { seedReservation, seedRoomTypeAndRatePlan, type SeededProperty } from "../helpers/hotel-fixtures.ts";
import { validateUblInvoice } from "../helpers/ubl.ts";
import { validateUblTr } from "../helpers/ubl-tr.ts";
import { pdfText } from "../helpers/pdf.ts";

let app: TestApp;
let hotel: SeededProperty;
let token: string;
let grpc: Client<typeof FolioService>;
let connect: Client<typeof FolioService>;
let otherGrpc: Client<typeof FolioService>;

function clients(t: string) {
  const interceptors = [
    (next: (req: { header: Headers }) => Promise<unknown>) => (req: { header: Headers }) => {
      req.header.set("authorization", `Bearer ${t}`);
      return next(req);
    },
  ] as never;
  return {
    grpc: createClient(FolioService, createGrpcTransport({ baseUrl: app.baseUrl, interceptors })),
    connect: createClient(
      FolioService,
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors }),
    ),
  };
}

async function failure(promise: Promise<unknown>): Promise<{ grpc: Code; code: string; fields: string[] }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const e = err as ConnectError;
  const [info] = e.findDetails(ErrorInfoSchema);
  return { grpc: e.code, code: info?.code ?? "", fields: (info?.details ?? []).map((d) => d.field) };
}

async function rest(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${app.baseUrl}${path}`, { headers: bearer(token) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A folio with three room nights at 1500.00 (business dates 2026-11-22..24) and a minibar charge of 45.00. */
async function stayWithCharges(): Promise<string> {
  const r = await seedReservation(app.db.pool, hotel, {
    arrival: "2026-11-22",
    departure: "2026-11-25",
    nightly: [1500_00n, 1500_00n, 1500_00n],
  });
  const folios = app.services.folios;
  for (const businessDate of ["2026-11-22", "2026-11-23", "2026-11-24"])
    await app.deps.transact((tx) =>
      folios.postRoomCharge(tx, hotel.id, {
        reservationId: r.id,
        reservationRoomId: r.roomLineId,
        businessDate,
        amountMinor: 1500_00n,
        description: "Konaklama",
        actor: "user:test",
      }),
    );
  const folio = await folios.getFolio(hotel.id, { reservationId: r.id });
  await folios.postCharge(hotel.id, "user:test", {
    folioId: folio.id,
    code: "MINIBAR",
    description: "Minibar",
    amountMinor: 45_00n,
  });
  return folio.id;
}

const company = {
  kind: "COMPANY",
  vkn: "9876543217",
  title: "Güneş Seyahat Ltd. Şti.",
  taxOffice: "Çankaya",
  address: { street: "Atatürk Bulvarı 5", district: "Çankaya", city: "Ankara", postalZone: "06690", countryCode: "TR" },
  eFatura: true,
};

beforeAll(async () => {
  app = await startTestApp();
  const p = await createTestProperty(app, { businessDate: "2026-11-24" });
  const q = await createTestProperty(app, { businessDate: "2026-11-24" });
  hotel = await seedRoomTypeAndRatePlan(app.db.pool, p);
  token = (await createStaffSession(app, { propertyCode: p.code, role: "accountant" })).accessToken;
  ({ grpc, connect } = clients(token));
  otherGrpc = clients((await createStaffSession(app, { propertyCode: q.code, role: "manager" })).accessToken).grpc;
});
afterAll(async () => {
  await app?.close();
});

describe("e-documents", () => {
  it("needs the issuer before finalizing and checks it (422 naming the field)", async () => {
    const folioId = await stayWithCharges();
    const draft = (await grpc.createInvoiceDraft({ folioId })).invoice!;
    const refused = await failure(grpc.finalizeInvoice({ invoiceId: draft.id }));
    expect([refused.grpc, refused.code]).toEqual([Code.FailedPrecondition, "invalid_transition"]);
    const issuer = {
      vkn: "1234567890",
      title: "Demo Turizm A.Ş.",
      taxOffice: "Beyoğlu",
      address: {
        street: "İstiklal Caddesi 1",
        district: "Beyoğlu",
        city: "İstanbul",
        postalZone: "34430",
        countryCode: "TR",
      },
    };
    for (const c of [grpc, connect]) {
      const bad = await failure(c.setInvoiceIssuer({ ...issuer, vkn: "1234567891" }));
      expect([bad.grpc, bad.code, bad.fields]).toEqual([Code.InvalidArgument, "validation_failed", ["vkn"]]);
      expect((await failure(c.setInvoiceIssuer({ ...issuer, taxOffice: "" }))).fields).toEqual(["taxOffice"]);
    }
    expect(await connect.setInvoiceIssuer(issuer)).toMatchObject({ vkn: "1234567890", title: "Demo Turizm A.Ş." });
    const issued = (await grpc.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    expect(issued.status).toBe(InvoiceStatus.ISSUED);
    expect(issued.ettn).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // No buyer given: the unknown consumer, an e-Arşiv invoice.
    expect(issued).toMatchObject({ type: "E_ARSIV", profileId: "EARSIVFATURA", typeCode: "SATIS" });
    expect(issued.buyer).toMatchObject({ kind: "PERSON", tckn: "11111111111" });
    const xml = new TextDecoder().decode(
      (await grpc.getInvoiceDocument({ invoiceId: issued.id, format: "xml" })).content,
    );
    expect(await validateUblInvoice(xml)).toBe("");
    expect(validateUblTr(xml)).toEqual([]);
    expect(xml).toContain(`<cbc:ID>${issued.number}</cbc:ID>`);
    expect(issued.number).toHaveLength(16);
  });

  it("sets rates per charge code with validity dates; lines carry them and add up", async () => {
    for (const c of [grpc, connect]) {
      const bad = await failure(
        c.setInvoiceTaxRate({ chargeCode: "MINIBAR", validFrom: "2026-01-01", vatRateBp: 1800 }),
      );
      expect([bad.grpc, bad.code, bad.fields]).toEqual([Code.InvalidArgument, "validation_failed", ["vatRateBp"]]);
      const noCode = await failure(
        c.setInvoiceTaxRate({ chargeCode: "MINIBAR", validFrom: "2026-01-01", vatRateBp: 0 }),
      );
      expect(noCode.fields).toEqual(["vatExemptionCode"]);
      // 301 (export of goods) is an ISTISNA invoice's code in GİB's rules; the service issues SATIS and IADE only.
      const istisna = await failure(
        c.setInvoiceTaxRate({ chargeCode: "MINIBAR", validFrom: "2026-01-01", vatRateBp: 0, vatExemptionCode: "301" }),
      );
      expect([istisna.grpc, istisna.fields]).toEqual([Code.InvalidArgument, ["vatExemptionCode"]]);
      expect(
        (await failure(c.setInvoiceTaxRate({ chargeCode: "MINIBAR", validFrom: "2026-13-01", vatRateBp: 2000 })))
          .fields,
      ).toEqual(["validFrom"]);
    }
    await grpc.setInvoiceTaxRate({ chargeCode: "MINIBAR", validFrom: "2026-01-01", vatRateBp: 2000 });
    // A decree from the 24th: room nights at 20 % VAT and 2 % accommodation tax; earlier nights keep the property's 10 % + 2 %.
    await connect.setInvoiceTaxRate({
      chargeCode: "ROOM",
      validFrom: "2026-11-24",
      vatRateBp: 2000,
      accommodationTaxRateBp: 200,
    });
    const folioId = await stayWithCharges();
    for (const c of [grpc, connect]) {
      const bad = await failure(c.createInvoiceDraft({ folioId, buyer: { ...company, vkn: "1234567891" } }));
      expect([bad.grpc, bad.code, bad.fields]).toEqual([Code.InvalidArgument, "validation_failed", ["buyer.vkn"]]);
      const person = { kind: "PERSON", tckn: "12345678901", firstName: "Ayşe", familyName: "Yılmaz" };
      expect((await failure(c.createInvoiceDraft({ folioId, buyer: person }))).fields).toEqual(["buyer.tckn"]);
      expect((await failure(c.createInvoiceDraft({ folioId, buyer: { ...person, kind: "ROBOT" } }))).fields).toEqual([
        "buyer.kind",
      ]);
    }
    const draft = (await grpc.createInvoiceDraft({ folioId, buyer: company })).invoice!;
    expect(draft).toMatchObject({
      type: "E_FATURA",
      profileId: "TEMELFATURA",
      buyer: { kind: "COMPANY", vkn: "9876543217", eFatura: true },
    });
    expect(
      draft.lines.map((l) => [
        l.chargeCode,
        l.unitCode,
        l.quantity,
        l.vatRateBp,
        l.accommodationTaxRateBp,
        l.totalMinor,
      ]),
    ).toEqual([
      ["ROOM", "DAY", 2, 1000, 200, 3000_00n],
      ["ROOM", "DAY", 1, 2000, 200, 1500_00n],
      ["MINIBAR", "C62", 1, 2000, 0, 45_00n],
    ]);
    // 3000.00 / 1.12: VAT 267.86, acc 53.57; 1500.00 / 1.22: VAT 245.90, acc 24.59; 45.00 / 1.2: VAT 7.50.
    expect(draft.lines.map((l) => [l.vatMinor, l.accommodationTaxMinor, l.netMinor])).toEqual([
      [267_86n, 53_57n, 2678_57n],
      [245_90n, 24_59n, 1229_51n],
      [7_50n, 0n, 37_50n],
    ]);
    expect([draft.netMinor, draft.taxMinor, draft.accommodationTaxMinor, draft.totalMinor]).toEqual([
      3945_58n,
      521_26n,
      78_16n,
      4545_00n,
    ]);
    const issued = (await connect.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const events = await app.db.pool.query<{ data: { type: string; number: string } }>(
      `select data from domain_events where property_id = $1 and type = 'invoice.issued' and data->>'invoiceId' = $2`,
      [hotel.id, issued.id],
    );
    expect(events.rows.map((r) => [r.data.type, r.data.number])).toEqual([["E_FATURA", issued.number]]);
    const doc = await connect.getInvoiceDocument({ invoiceId: issued.id, format: "xml" });
    expect(doc.contentType).toBe("application/xml");
    expect(doc.fileName).toBe(`${issued.number}.xml`);
    const xml = new TextDecoder().decode(doc.content);
    expect(await validateUblInvoice(xml)).toBe("");
    expect(validateUblTr(xml)).toEqual([]);
    expect(xml).toContain("<cbc:ProfileID>TEMELFATURA</cbc:ProfileID>");
    expect(xml).toContain(`<cbc:UUID>${issued.ettn}</cbc:UUID>`);
    expect(xml).toContain('<cbc:ID schemeID="VKN">9876543217</cbc:ID>');
    expect(xml).toContain('<cbc:TaxInclusiveAmount currencyID="TRY">4545.00</cbc:TaxInclusiveAmount>');
    // The same bytes on every face; REST carries them base64 in JSON.
    expect((await grpc.getInvoiceDocument({ invoiceId: issued.id, format: "xml" })).content).toEqual(doc.content);
    const viaRest = await rest(`/api/mobile/v1/invoices/${issued.id}/document?format=xml`);
    expect(viaRest.status).toBe(200);
    expect(viaRest.body.contentType).toBe("application/xml");
    expect(Buffer.from(viaRest.body.content as string, "base64").toString("utf8")).toBe(xml);

    const pdf = await rest(`/api/mobile/v1/invoices/${issued.id}/document?format=pdf`);
    expect(pdf.body.contentType).toBe("application/pdf");
    const text = await pdfText(Buffer.from(pdf.body.content as string, "base64"));
    for (const s of [
      `Fatura No: ${issued.number}`,
      `ETTN: ${issued.ettn}`,
      "e-Fatura",
      "Güneş Seyahat Ltd. Şti.",
      "Hesaplanan KDV (%10) matrah 2678.57 TRY: 267.86 TRY",
      "Hesaplanan KDV (%20) matrah 1267.01 TRY: 253.40 TRY",
      "Konaklama Vergisi (%2) matrah 3908.08 TRY: 78.16 TRY",
      "Ödenecek Tutar: 4545.00 TRY",
    ])
      expect(text).toContain(s);
    const viaConnect = await connect.getInvoiceDocument({ invoiceId: issued.id, format: "pdf" });
    expect(await pdfText(viaConnect.content)).toContain(`ETTN: ${issued.ettn}`);
  });

  it("invoices an e-Fatura buyer under TICARIFATURA when asked; its return is a TEMELFATURA", async () => {
    const folioId = await stayWithCharges();
    for (const c of [grpc, connect]) {
      const bad = await failure(c.createInvoiceDraft({ folioId, buyer: { ...company, eFaturaProfile: "KAMU" } }));
      expect([bad.grpc, bad.code, bad.fields]).toEqual([
        Code.InvalidArgument,
        "validation_failed",
        ["buyer.eFaturaProfile"],
      ]);
      const outside = { ...company, eFatura: false, eFaturaProfile: "TICARIFATURA" };
      expect((await failure(c.createInvoiceDraft({ folioId, buyer: outside }))).fields).toEqual([
        "buyer.eFaturaProfile",
      ]);
    }
    const draft = (await connect.createInvoiceDraft({ folioId, buyer: { ...company, eFaturaProfile: "TICARIFATURA" } }))
      .invoice!;
    expect(draft).toMatchObject({
      type: "E_FATURA",
      profileId: "TICARIFATURA",
      buyer: { eFatura: true, eFaturaProfile: "TICARIFATURA" },
    });
    const issued = (await grpc.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const xml = new TextDecoder().decode(
      (await grpc.getInvoiceDocument({ invoiceId: issued.id, format: "xml" })).content,
    );
    expect(xml).toContain("<cbc:ProfileID>TICARIFATURA</cbc:ProfileID>");
    expect(await validateUblInvoice(xml)).toBe("");
    expect(validateUblTr(xml)).toEqual([]);
    const back = (await grpc.createReturnInvoiceDraft({ invoiceId: issued.id })).invoice!;
    expect(back).toMatchObject({ profileId: "TEMELFATURA", typeCode: "IADE" });
    const returned = (await connect.finalizeInvoice({ invoiceId: back.id })).invoice!;
    const returnXml = new TextDecoder().decode(
      (await connect.getInvoiceDocument({ invoiceId: returned.id, format: "xml" })).content,
    );
    expect(validateUblTr(returnXml)).toEqual([]);
    // A company without a profile given stays TEMELFATURA (the default), and says so.
    const plain = (await grpc.createInvoiceDraft({ folioId: await stayWithCharges(), buyer: company })).invoice!;
    expect([plain.profileId, plain.buyer?.eFaturaProfile]).toEqual(["TEMELFATURA", "TEMELFATURA"]);
  });

  it("refuses drafts, bad formats and other properties' invoices on every face", async () => {
    const folioId = await stayWithCharges();
    const draft = (await grpc.createInvoiceDraft({ folioId })).invoice!;
    for (const c of [grpc, connect]) {
      const d = await failure(c.getInvoiceDocument({ invoiceId: draft.id, format: "xml" }));
      expect([d.grpc, d.code]).toEqual([Code.NotFound, "not_found"]);
      const f = await failure(c.getInvoiceDocument({ invoiceId: draft.id, format: "docx" }));
      expect([f.grpc, f.code, f.fields]).toEqual([Code.InvalidArgument, "invalid_argument", ["format"]]);
    }
    const draftRest = await rest(`/api/mobile/v1/invoices/${draft.id}/document?format=xml`);
    expect([draftRest.status, (draftRest.body.error as { code: string }).code]).toEqual([404, "not_found"]);
    const issued = (await grpc.finalizeInvoice({ invoiceId: draft.id })).invoice!;
    const other = await failure(otherGrpc.getInvoiceDocument({ invoiceId: issued.id, format: "xml" }));
    expect([other.grpc, other.code]).toEqual([Code.NotFound, "not_found"]);
    const missing = await rest(`/api/mobile/v1/invoices/${folioId}/document?format=pdf`);
    expect(missing.status).toBe(404);
  });
});
