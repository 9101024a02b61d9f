export {
  createInvoiceService,
  type Invoice,
  type InvoiceDeps,
  type InvoiceService,
} from "./invoice.service.ts";
export { splitGross, divideRoundHalfAway, type TaxRates, type TaxSplit } from "./tax-split.ts";
export { defaultSeries, formatInvoiceNumber } from "./numbering.ts";
export type { Address, Buyer, BuyerInput } from "./buyer.ts";
export type { InvoiceItem } from "./lines.ts";
