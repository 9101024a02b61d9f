import { GuestService } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import type { Deps, Module } from "../module.ts";
import type { LineGuests } from "../reservations/index.ts";
import { createGuestRpc, guestOut } from "./guests.rpc.ts";
import { createGuestService, type GuestService as GuestDomain } from "./guests.service.ts";
import { loadGuestVault } from "./vault.ts";

export type { GuestService } from "./guests.service.ts";
export { guestOut } from "./guests.rpc.ts";
export type { ScannedPerson } from "./stays.service.ts";

/** The guests of reservation room lines for the reservation reads (wired into the reservations module by app.ts). */
export function lineGuestsReader(guests: GuestDomain): LineGuests {
  return async (propertyId, lineIds, reveal) => {
    const found = await guests.guestsOfLines(await guests.scopeOf(propertyId), lineIds, reveal);
    return new Map([...found].map(([line, list]) => [line, list.map(guestOut)]));
  };
}

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
