/** GİB's UBL-TR rules as the service runs them when it issues an invoice (src/modules/invoices/gib-rules.ts). */
export { gibRuleFailures as validateUblTr } from "../../src/modules/invoices/gib-rules.ts";
