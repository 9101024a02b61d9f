export { createInvoiceService, type Invoice, type InvoiceService } from "./invoice.service.ts";
