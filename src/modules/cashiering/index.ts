import type { Deps, Module } from "../module.ts";
import { folioRpcServices, registerFolioRpc, type FolioRpcServices } from "./folio.rpc.ts";

export type { FolioRpcServices } from "./folio.rpc.ts";

/**
 * hotelops.folio.v1.FolioService over gRPC, Connect and gRPC-Web: the cashier's desk, one RPC face over three
 * modules that build on each other (folio <- invoices <- night-audit). It lives apart from them so that none of
 * the three has to import the ones built on it. The services come in built once by app.ts.
 */
export function createCashieringModule(deps: Deps, services: FolioRpcServices): Module {
  return {
    name: "cashiering",
    services: folioRpcServices,
    registerRpc: (router) => registerFolioRpc(router, services),
  };
}
