import { describe, expect, it } from "vitest";
import { documentKinds, input } from "../../../test/invoices/ubl-inputs.ts";
import { gibRuleFailures } from "./gib-rules.ts";
import { itemsFromCharges } from "./lines.ts";
import { renderUblTr } from "./ubl.ts";

// The batched run of GİB's rules (one fontoxpath call per rule, code lists computed once) against the reference run
// (one call per let and per test on each node): the same failures, in the same order, with the same messages.
const stay = itemsFromCharges(
  [
    ...Array.from({ length: 30 }, (_, i) => ({
      kind: "ROOM" as const,
      code: "ROOM",
      description: "Konaklama",
      amountMinor: BigInt(1500_00 + (i % 3) * 100_00),
    })),
    ...Array.from({ length: 10 }, (_, i) => ({
      kind: "EXTRA" as const,
      code: `X${i % 4}`,
      description: "Minibar",
      amountMinor: BigInt(45_00 + i),
    })),
  ],
  (c) =>
    c.kind === "ROOM"
      ? { vatRateBp: 1000, vatExemptionCode: null, accommodationTaxRateBp: 200 }
      : { vatRateBp: 2000, vatExemptionCode: null, accommodationTaxRateBp: 0 },
);
const valid: Record<string, string> = {
  ...Object.fromEntries(Object.entries(documentKinds).map(([k, d]) => [k, renderUblTr(d)])),
  "30-night stay": renderUblTr(input({ items: stay })),
};
const sale = valid["e-Arşiv SATIS to a consumer"]!;
const efatura = valid["e-Fatura TEMELFATURA"]!;
const iade = valid["e-Fatura IADE"]!;
/** Documents that break GİB's rules: a wrong value, a missing element, an attribute, several at once. */
const broken: Record<string, string> = {
  "IADE without its document type": iade.replace("<cbc:DocumentTypeCode>IADE</cbc:DocumentTypeCode>", ""),
  "IADE as TICARIFATURA": iade.replace("TEMELFATURA", "TICARIFATURA"),
  "exempt line without its reason": sale.replace(/<cbc:TaxExemptionReason>[^<]*<\/cbc:TaxExemptionReason>/g, ""),
  "unknown profile": efatura.replace("TEMELFATURA", "TEMEL"),
  "unknown unit": sale.replace('unitCode="DAY"', 'unitCode="NIGHT"'),
  "unknown currency on every amount": sale.replace(/currencyID="TRY"/g, 'currencyID="TRL"'),
  "a copy": sale.replace("<cbc:CopyIndicator>false", "<cbc:CopyIndicator>true"),
  "number of 15 characters": sale.replace("DEM2026000000042", "DEM202600000042"),
  "number of another century": sale.replace("DEM2026000000042", "DEM1926000000042"),
  "ETTN not a UUID": sale.replace("019ad8a0-1c2b-7e3f-8a4b-5c6d7e8f9a0b", "019ad8a0-1c2b-7e3f-8a4b"),
  "TCKN of 10 digits": sale.replace(">11111111111<", ">1111111111<"),
  "VKN of 9 digits": efatura.replace(">9876543217<", ">987654321<"),
  "issued in the future": sale.replace(/<cbc:IssueDate>[^<]*</, "<cbc:IssueDate>2999-01-01<"),
  "issued before 2005": sale.replace(/<cbc:IssueDate>[^<]*</, "<cbc:IssueDate>2004-12-31<"),
  "amount with three decimals": sale.replace(/(<cbc:PayableAmount currencyID="TRY">)([\d.]+)/, "$1$2" + "1"),
  "no customer name": sale.replace(/<cbc:FirstName>[^<]*<\/cbc:FirstName>/, "<cbc:FirstName></cbc:FirstName>"),
  "unknown tax type on the lines": valid["30-night stay"]!.replace(/<cbc:TaxTypeCode>0015</g, "<cbc:TaxTypeCode>9999<"),
  "unknown country and tax type": efatura
    .replace("<cbc:IdentificationCode>TR<", "<cbc:IdentificationCode>XX<")
    .replace("<cbc:TaxTypeCode>0059<", "<cbc:TaxTypeCode>0000<"),
};

describe("GİB's rules, batched", () => {
  it("give the reference run's failures on valid and broken documents", () => {
    const today = "2026-11-22";
    for (const [name, xml] of Object.entries({ ...valid, ...broken })) {
      const reference = gibRuleFailures(xml, today, false);
      expect([name, gibRuleFailures(xml, today, true)]).toEqual([name, reference]);
      // the valid ones pass, every broken one fails (so the comparison is not between two empty lists)
      expect([name, reference.length > 0]).toEqual([name, name in broken]);
    }
  });
});
