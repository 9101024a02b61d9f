export { createInvoiceService, type Invoice, type InvoiceService } from "./invoice.service.ts";
export type { Address, Buyer, BuyerInput } from "./buyer.ts";
export type { InvoiceItem } from "./lines.ts";
export { invoicesOfFolios } from "./invoice.repository.ts";
