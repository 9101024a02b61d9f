import { GuestService } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import type { Deps, Module } from "../module.ts";
import { createGuestRpc } from "./guests.rpc.ts";
import { createGuestService, type GuestService as GuestDomain } from "./guests.service.ts";
import { loadGuestVault } from "./vault.ts";

export type { GuestService } from "./guests.service.ts";

/** Builds the guest service once (app.ts): the vault's keys come from the configuration. */
export function createGuests(deps: Pick<Deps, "config" | "db" | "transact" | "clock">): GuestDomain {
  return createGuestService({
    transact: deps.transact,
    pool: deps.db.pool,
    clock: deps.clock,
    vault: loadGuestVault(deps.config),
  });
}

/** Guest profiles: GuestService (gRPC, Connect, the /api/panel/v1/guests REST routes). */
export function createGuestsModule(deps: Pick<Deps, "db">, guests: GuestDomain): Module {
  const rpc = createGuestRpc(deps.db.pool, guests);
  return { name: "guests", services: [GuestService], registerRpc: (router) => rpc.register(router) };
}
