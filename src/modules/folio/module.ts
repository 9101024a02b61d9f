import type { Deps, Module } from "../module.ts";
import { createInvoiceService } from "../invoices/index.ts";
import { createNightAuditService, type MarkNoShow } from "../night-audit/index.ts";
import { createFolioService } from "./folio.service.ts";
import { folioRpcServices, registerFolioRpc, type FolioRpcServices } from "./folio.rpc.ts";

/**
 * The folio, invoice and night-audit services of one app. Kept out of index.ts because it composes the
 * invoices and night-audit modules, which build on this module's index (importing it there would be a cycle).
 * `markNoShow` is the reservations module's in-transaction no-show. The mobile face reuses `nightAudit`.
 */
export function createFolioServices(deps: Pick<Deps, "transact" | "clock">, options: { markNoShow: MarkNoShow }): FolioRpcServices {
  const folios = createFolioService({ transact: deps.transact, clock: deps.clock });
  const invoices = createInvoiceService({ transact: deps.transact, clock: deps.clock });
  const nightAudit = createNightAuditService({ transact: deps.transact, clock: deps.clock, folios, markNoShow: options.markNoShow });
  return { folios, invoices, nightAudit };
}

/** hotelops.folio.v1.FolioService over gRPC, Connect and gRPC-Web. */
export function createFolioModule(deps: Deps, services: FolioRpcServices): Module {
  return {
    name: "folio",
    services: folioRpcServices,
    registerRpc: (router) => registerFolioRpc(router, services, deps.db.pool),
  };
}
