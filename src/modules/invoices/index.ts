import type { Deps, Module } from "../module.ts";
import { startDeliveryJobs } from "./delivery.jobs.ts";
import { createHttpIntegrator } from "./integrator.ts";

export { createInvoiceService, type Invoice, type InvoiceService } from "./invoice.service.ts";
export { createHttpIntegrator } from "./integrator.ts";
export type { Address, Buyer, BuyerInput } from "./buyer.ts";
export type { InvoiceItem } from "./lines.ts";
export { invoicesOfFolios } from "./invoice.repository.ts";
export type { Delivery } from "./deliveries.repository.ts";

/**
 * The e-document delivery worker (queue invoices.delivery), sending through the HTTP integrator of
 * EDOCUMENT_INTEGRATOR_URL. Without one nothing is sent: issued invoices wait QUEUED with their jobs.
 */
export function createInvoicesModule(deps: Deps): Module {
  const config = deps.config.edocumentIntegrator;
  return {
    name: "invoices",
    ...(config !== undefined
      ? {
          startWorkers: () =>
            startDeliveryJobs(
              deps.boss,
              { transact: deps.transact, clock: deps.clock, sender: createHttpIntegrator(config) },
              config,
              deps.logger,
            ),
        }
      : {}),
  };
}
