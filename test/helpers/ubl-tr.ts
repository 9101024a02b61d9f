import { gibRuleFailures } from "../../src/modules/invoices/gib-rules.ts";

/**
 * GİB's UBL-TR rules as the service runs them when it issues an invoice (src/modules/invoices/gib-rules.ts): "the
 * issue date is not after today" is judged by Turkey's date, as at finalize, not by the machine's (UTC) date, which
 * is a day behind between 21:00 and 24:00 UTC.
 */
export const validateUblTr = (xml: string) =>
  gibRuleFailures(
    xml,
    new Intl.DateTimeFormat("en-CA", {
      timeZone: "Europe/Istanbul",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    }).format(new Date()),
  );
