import { GuestService } from "../../../gen/hotelops/guest/v1/guest_pb.js";
import { queues } from "../../jobs/queues.ts";
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

/**
 * Guest profiles: GuestService (gRPC, Connect, the /api/panel/v1/guests REST routes) and the daily retention job
 * (profiles past GUEST_RETENTION_YEARS anonymised).
 */
export function createGuestsModule(deps: Pick<Deps, "db" | "boss" | "config" | "logger">, guests: GuestDomain): Module {
  const rpc = createGuestRpc(deps.db.pool, guests);
  return {
    name: "guests",
    services: [GuestService],
    registerRpc: (router) => rpc.register(router),
    async startWorkers() {
      await deps.boss.registerWorker(queues.guestRetention, async () => {
        let erased = 0;
        // batches of 500, each its own transaction; a bound keeps one run short (the next day's run goes on)
        for (let i = 0; i < 100; i++) {
          const n = await guests.erasePastRetention(deps.config.guestRetentionYears);
          erased += n;
          if (n < 500) break;
        }
        if (erased > 0) deps.logger.info({ erased }, "guest retention");
        return { erased };
      });
      await deps.boss.pgboss.schedule(queues.guestRetention, "41 3 * * *");
      await deps.boss.pgboss.send(queues.guestRetention, {});
    },
  };
}
