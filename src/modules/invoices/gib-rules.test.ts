import { describe, expect, it } from "vitest";
import { input } from "../../../test/invoices/ubl-inputs.ts";
import { gibRuleFailures } from "./gib-rules.ts";
import { renderUblTr } from "./ubl.ts";

const utcDay = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe("GİB's IssueDate rule in Turkish time", () => {
  it("holds a date after Turkey's today against the document, not one Turkey has reached", () => {
    const xml = renderUblTr(input({ issueDate: utcDay(1) }));
    const dated = (today?: string) => gibRuleFailures(xml, today).map((f) => f.context);
    // GİB's rule compares with XPath's current-date(), the UTC date: tomorrow (UTC) fails it
    expect(dated()).toEqual(["//cbc:IssueDate"]);
    // between midnight and 03:00 in Turkey, tomorrow (UTC) is Turkey's today: not held against the document
    expect(dated(utcDay(1))).toEqual([]);
    // a date after Turkey's today still fails, naming the rule
    expect(dated(utcDay(0))).toEqual(["//cbc:IssueDate"]);
    expect(gibRuleFailures(renderUblTr(input({ issueDate: utcDay(0) })))).toEqual([]);
  });
});
