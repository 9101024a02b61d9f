import { describe, expect, it } from "vitest";
import { computeItem, itemsFromCharges } from "../../src/modules/invoices/lines.ts";
import { formatAmount, renderUblTr, type UblInput } from "../../src/modules/invoices/ubl.ts";
import { renderInvoicePdf } from "../../src/modules/invoices/pdf.ts";
import { validateUblInvoice } from "../helpers/ubl.ts";
import { pdfText } from "../helpers/pdf.ts";

const issuer: UblInput["issuer"] = {
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
const room = { kind: "ROOM" as const, code: "ROOM", description: "Konaklama (oda & kahvaltı)", amountMinor: 1500_00n };
const extra = { kind: "EXTRA" as const, code: "MINIBAR", description: "Minibar <şişe su>", amountMinor: 45_00n };

function input(over: Partial<UblInput> = {}): UblInput {
  const items = itemsFromCharges([room, room, extra], (c) =>
    c.kind === "ROOM"
      ? { vatRateBp: 1000, vatExemptionCode: null, accommodationTaxRateBp: 200 }
      : { vatRateBp: 2000, vatExemptionCode: null, accommodationTaxRateBp: 0 },
  );
  items.push(
    computeItem(
      {
        lineNo: 3,
        chargeCode: "TRANSFER",
        description: "Havalimanı transferi",
        unitCode: "C62",
        quantity: 3,
        unitPriceMinor: 100_00n,
        discountMinor: 50_00n,
      },
      { vatRateBp: 0, vatExemptionCode: "351", accommodationTaxRateBp: 0 },
    ),
  );
  return {
    number: "DEM2026000000042",
    ettn: "019ad8a0-1c2b-7e3f-8a4b-5c6d7e8f9a0b",
    profileId: "EARSIVFATURA",
    typeCode: "SATIS",
    issueDate: "2026-11-22",
    issueTime: "13:05:09",
    currency: "TRY",
    amountScale: 100,
    issuer,
    buyer: {
      kind: "PERSON",
      tckn: "11111111111",
      firstName: "Çağrı",
      familyName: "Öztürk",
      address: { street: "", district: "", city: "", postalZone: "", countryCode: "DE" },
    },
    items,
    ...over,
  };
}

describe("UBL-TR documents", () => {
  it("validate against the OASIS UBL 2.1 Invoice schema for consumers, e-Fatura companies, returns and other scales", async () => {
    const company: UblInput["buyer"] = {
      kind: "COMPANY",
      vkn: "9876543217",
      title: "Güneş Seyahat Ltd. Şti.",
      taxOffice: "Çankaya",
      address: {
        street: "Atatürk Bulvarı 5",
        district: "Çankaya",
        city: "Ankara",
        postalZone: "06690",
        countryCode: "TR",
      },
      eFatura: true,
    };
    const docs = [
      input(),
      input({ profileId: "TEMELFATURA", buyer: company }),
      input({ typeCode: "IADE", returnOf: { number: "DEM2026000000041", issueDate: "2026-11-20" } }),
      input({ currency: "KWD", amountScale: 1000 }),
    ];
    for (const d of docs) expect(await validateUblInvoice(renderUblTr(d))).toBe("");
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
