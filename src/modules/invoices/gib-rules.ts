import { fileURLToPath } from "node:url";
import { Schematron, type SchematronFailure } from "./schematron.ts";

export type { SchematronFailure } from "./schematron.ts";

/**
 * GİB's UBL-TR schematron rules (assets/ubl-tr, unmodified; its README names their source, version and licence),
 * compiled once per process (about 2 s: the delivery worker at its start, an API process at its first finalize) and
 * run on every document as it is finalised (invoice.service.ts: a document that breaks one is never issued) and
 * again by the delivery job before the upload, with Turkey's date of the upload (delivery.jobs.ts).
 */
const dir = fileURLToPath(new URL("../../../assets/ubl-tr/", import.meta.url));
let main: Schematron | undefined;

/** Compiles the rules now (a process that sends e-documents does it at start, not in its first job). */
export function compileGibRules(): void {
  main ??= Schematron.load(dir, "UBL-TR_Main_Schematron.xml");
}

/** The text of a refusal by GİB's rules: how many rules a document breaks and the first one, named. */
const MAX_REASON_CHARS = 1000;
export function describeRuleFailures(failures: SchematronFailure[]): string {
  const first = failures[0]!;
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : "";
  return `GİB UBL-TR rule ${first.context}${more}: ${first.message}`.slice(0, MAX_REASON_CHARS);
}

/**
 * GİB's rules (UBL-TR_Main_Schematron.xml) on an unsigned invoice; [] when it passes. The rules read `$type` to tell
 * e-Fatura from e-Arşiv: an `EARSIVFATURA` document is checked as `earchive`, every other as `efatura`. Rules on the
 * envelope and the XAdES signature have nothing to check in an unsigned, unenveloped invoice (the integrator signs).
 *
 * `turkeyToday` (YYYY-MM-DD, from the injected clock): GİB's "IssueDate not after today" compares with XPath's
 * `current-date()`, which the engine takes from the system clock in UTC, three hours behind Turkey; with it given,
 * an issue date on or before Turkey's today is not held against the UTC date (from midnight to 03:00 in Turkey an
 * invoice of the new day would fail otherwise). A later issue date fails as GİB's rule says.
 *
 * `batched` false: the reference run of the rules (schematron.ts), for the test and the bench that compare it with
 * the batched run the service uses.
 */
export function gibRuleFailures(xml: string, turkeyToday?: string, batched = true): SchematronFailure[] {
  compileGibRules();
  const earchive = xml.includes("<cbc:ProfileID>EARSIVFATURA</cbc:ProfileID>");
  const failures = main!.validate(xml, { type: earchive ? "earchive" : "efatura" }, batched);
  if (turkeyToday === undefined) return failures;
  const issueDate = /<cbc:IssueDate>(\d{4}-\d{2}-\d{2})<\/cbc:IssueDate>/.exec(xml)?.[1];
  const notFuture = issueDate !== undefined && issueDate <= turkeyToday;
  return failures.filter((f) => !(notFuture && f.context === "//cbc:IssueDate" && f.test.includes("current-date()")));
}
