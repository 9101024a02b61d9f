import { describe, expect, it } from "vitest";
import { formatAmount, renderUblTr } from "../../src/modules/invoices/ubl.ts";
import { renderInvoicePdf } from "../../src/modules/invoices/pdf.ts";
import { validateUblInvoice } from "../helpers/ubl.ts";
import { pdfText } from "../helpers/pdf.ts";
import { validateUblTr } from "../helpers/ubl-tr.ts";
import { documentKinds, input } from "./ubl-inputs.ts";

describe("UBL-TR documents", () => {
  it("validate against the OASIS UBL 2.1 Invoice schema for consumers, e-Fatura companies, returns and other scales", async () => {
    const docs = [...Object.values(documentKinds), input({ currency: "KWD", amountScale: 1000 })];
    for (const d of docs) expect(await validateUblInvoice(renderUblTr(d))).toBe("");
  });

  it("pass GİB's UBL-TR schematron rules: e-Arşiv and e-Fatura (TEMELFATURA, TICARIFATURA), returns, exemptions", () => {
    for (const [kind, d] of Object.entries(documentKinds))
      expect([kind, validateUblTr(renderUblTr(d))]).toEqual([kind, []]);
    // The exempt line carries GİB's code and its text; the return names the returned invoice as IADE.
    expect(renderUblTr(input())).toContain(
      "<cbc:TaxExemptionReasonCode>351</cbc:TaxExemptionReasonCode><cbc:TaxExemptionReason>KDV - İstisna Olmayan Diğer</cbc:TaxExemptionReason>",
    );
    expect(renderUblTr(documentKinds["e-Arşiv IADE"]!)).toContain(
      "<cbc:ID>DEM2026000000041</cbc:ID><cbc:IssueDate>2026-11-20</cbc:IssueDate><cbc:DocumentTypeCode>IADE</cbc:DocumentTypeCode>",
    );
  });

  it("are refused by GİB's rules where a document breaks them (the check can fail)", () => {
    const messages = (xml: string) => validateUblTr(xml).map((f) => f.message);
    const iade = renderUblTr(documentKinds["e-Fatura IADE"]!);
    expect(messages(iade.replace("<cbc:DocumentTypeCode>IADE</cbc:DocumentTypeCode>", ""))).toEqual([
      expect.stringMatching(/^IADE ve TEVKIFATIADE fatura tiplerinde/),
    ]);
    // A return is TEMELFATURA or EARSIVFATURA, never TICARIFATURA (corrections.ts returns a commercial one as TEMELFATURA).
    expect(messages(iade.replace("TEMELFATURA", "TICARIFATURA"))).toEqual([
      expect.stringMatching(/^Fatura tipi IADE iken fatura profili sadece TEMELFATURA/),
    ]);
    const sale = renderUblTr(input());
    expect(messages(sale.replace(/<cbc:TaxExemptionReason>[^<]*<\/cbc:TaxExemptionReason>/g, ""))).toEqual([
      expect.stringMatching(/^Vergi miktarı 0 olan 0015 vergi kodlu KDV/),
    ]);
    // Profiles come from GİB's list; attribute rules (unitCode, currencyID) are checked too.
    expect(messages(renderUblTr(documentKinds["e-Fatura TEMELFATURA"]!).replace("TEMELFATURA", "TEMEL"))).toEqual([
      expect.stringMatching(/^Geçersiz cbc:ProfileID elemanı değeri : 'TEMEL'/),
    ]);
    expect(messages(sale.replace('unitCode="DAY"', 'unitCode="NIGHT"'))).toEqual([
      expect.stringMatching(/^Geçersiz unitCode niteliği : 'NIGHT'/),
    ]);
    expect(messages(sale.replace('currencyID="TRY"', 'currencyID="TRL"'))).toEqual([
      expect.stringMatching(/^Geçersiz currencyID niteliği : 'TRL'/),
    ]);
    expect(messages(sale.replace("<cbc:CopyIndicator>false", "<cbc:CopyIndicator>true"))).toHaveLength(1);
  });

  it("carries the number, ETTN, profile, lines, a TaxSubtotal per rate and totals that add up", () => {
    const d = input();
    const xml = renderUblTr(d);
    expect(xml).toContain("<cbc:CustomizationID>TR1.2</cbc:CustomizationID>");
    expect(xml).toContain("<cbc:ID>DEM2026000000042</cbc:ID>");
    expect(xml).toContain(`<cbc:UUID>${d.ettn}</cbc:UUID>`);
    expect(xml).toContain("<cbc:ProfileID>EARSIVFATURA</cbc:ProfileID>");
    expect(xml).toContain("<cbc:InvoiceTypeCode>SATIS</cbc:InvoiceTypeCode>");
    expect(xml).toContain("<cbc:IssueTime>13:05:09</cbc:IssueTime>");
    expect(xml).toContain('<cbc:ID schemeID="TCKN">11111111111</cbc:ID>');
    expect(xml).toContain("Minibar &lt;şişe su&gt;");
    expect(xml).toContain("<cbc:TaxExemptionReasonCode>351</cbc:TaxExemptionReasonCode>");
    expect(xml).toContain('<cbc:InvoicedQuantity unitCode="DAY">2</cbc:InvoicedQuantity>');
    // Rooms 3000.00 (10 % + 2 %): VAT 267.86, accommodation 53.57, net 2678.57; minibar 45.00 at 20 %: 7.50 / 37.50;
    // transfer 3 x 100.00 - 50.00 = 250.00 at 0 % (exempt 351).
    const header = xml.slice(xml.indexOf("<cac:TaxTotal>"), xml.indexOf("<cac:InvoiceLine>"));
    expect(header.match(/<cac:TaxSubtotal>/g)).toHaveLength(4);
    expect(header).toContain('<cbc:TaxAmount currencyID="TRY">328.93</cbc:TaxAmount>');
    expect(header).toContain(
      '<cbc:TaxableAmount currencyID="TRY">2678.57</cbc:TaxableAmount><cbc:TaxAmount currencyID="TRY">267.86</cbc:TaxAmount><cbc:Percent>10</cbc:Percent>',
    );
    expect(header).toContain(
      '<cbc:TaxableAmount currencyID="TRY">37.50</cbc:TaxableAmount><cbc:TaxAmount currencyID="TRY">7.50</cbc:TaxAmount><cbc:Percent>20</cbc:Percent>',
    );
    expect(header).toContain('<cbc:TaxAmount currencyID="TRY">53.57</cbc:TaxAmount><cbc:Percent>2</cbc:Percent>');
    expect(header).toContain(
      '<cbc:LineExtensionAmount currencyID="TRY">2966.07</cbc:LineExtensionAmount><cbc:TaxExclusiveAmount currencyID="TRY">2966.07</cbc:TaxExclusiveAmount>' +
        '<cbc:TaxInclusiveAmount currencyID="TRY">3295.00</cbc:TaxInclusiveAmount><cbc:PayableAmount currencyID="TRY">3295.00</cbc:PayableAmount>',
    );
    // The discounted line: 300.00 gross before, 50.00 off, all net at 0 %.
    expect(xml).toContain(
      '<cbc:Amount currencyID="TRY">50.00</cbc:Amount><cbc:BaseAmount currencyID="TRY">300.00</cbc:BaseAmount>',
    );
    expect(xml).toContain('<cbc:PriceAmount currencyID="TRY">100</cbc:PriceAmount>');
  });

  it("is refused by the schema when an element is out of order or missing (the check can fail)", async () => {
    const xml = renderUblTr(input());
    const swapped = xml
      .replace("<cbc:IssueTime>13:05:09</cbc:IssueTime>", "")
      .replace("</cbc:InvoiceTypeCode>", "</cbc:InvoiceTypeCode><cbc:IssueTime>13:05:09</cbc:IssueTime>");
    expect(await validateUblInvoice(swapped)).toMatch(/IssueTime/);
    expect(await validateUblInvoice(xml.replace(/<cac:LegalMonetaryTotal>.*<\/cac:LegalMonetaryTotal>/, ""))).toMatch(
      /LegalMonetaryTotal|InvoiceLine/,
    );
  });

  it("formats minor units with the currency's digits", () => {
    expect(formatAmount(12345n, 100)).toBe("123.45");
    expect(formatAmount(5n, 100)).toBe("0.05");
    expect(formatAmount(-5n, 1000)).toBe("-0.005");
    expect(formatAmount(7n, 1)).toBe("7");
  });

  it("renders a PDF that reads back with the number, ETTN, totals, tax lines and Turkish letters", async () => {
    const d = input({
      buyer: {
        kind: "COMPANY",
        vkn: "9876543217",
        title: "Güneş Seyahat Ltd. Şti.",
        taxOffice: "Çankaya",
        address: {
          street: "Atatürk Bulvarı 5",
          district: "Çankaya",
          city: "Ankara",
          postalZone: "",
          countryCode: "TR",
        },
        eFatura: false,
      },
    });
    const text = await pdfText(await renderInvoicePdf(d));
    expect(text).toContain("e-Arşiv Fatura");
    expect(text).toContain("Fatura No: DEM2026000000042");
    expect(text).toContain(`ETTN: ${d.ettn}`);
    expect(text).toContain("Güneş Seyahat Ltd. Şti.");
    expect(text).toContain("Demo Turizm A.Ş.");
    expect(text).toContain("İstiklal Caddesi 1");
    expect(text).toContain("Hesaplanan KDV (%10) matrah 2678.57 TRY: 267.86 TRY");
    expect(text).toContain("Hesaplanan KDV (%20) matrah 37.50 TRY: 7.50 TRY");
    expect(text).toContain("Konaklama Vergisi (%2) matrah 2678.57 TRY: 53.57 TRY");
    expect(text).toContain("Ödenecek Tutar: 3295.00 TRY");
  });
});
