import type pg from "pg";
import { AppError } from "../../errors.ts";
import type { Transact } from "../../db/transaction.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import type { Principal } from "../auth/principal.ts";
import { adapterFor } from "./adapters.ts";
import { findEvent, insertEvent, propertyInReach, type StoredEvent } from "./connectivity.repository.ts";

export const RESERVATION_EVENTS_QUEUE = "connectivity.reservation-events";

export interface ConnectivityDeps {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
}

type ClientPrincipal = Extract<Principal, { kind: "partner" | "internal" }>;

function client(principal: Principal | undefined): ClientPrincipal {
  if (principal === undefined || principal.kind === "staff") throw new AppError("forbidden", "The connectivity API is for partner and internal clients.");
  return principal;
}

export function createConnectivityService(deps: ConnectivityDeps) {
  return {
    /**
     * Validates the event with the provider's adapter and stores it in the common queue with its processing job,
     * in one transaction. Clients not yet approved for live (environment "test") may write to sandbox properties only.
     */
    async queueReservationEvent(principal: Principal | undefined, propertyCode: string, payload: Record<string, unknown>): Promise<{ eventId: string; status: "QUEUED" }> {
      const caller = client(principal);
      const property = await propertyInReach(deps.pool, caller, propertyCode);
      if (caller.environment !== "live" && !property.sandbox) {
        throw new AppError("partner_not_approved", "Live writes need partner approval; until then reservation events are accepted for the sandbox property only.");
      }
      const event = adapterFor(caller.provider).parse(payload);
      const id = newId();
      await deps.transact(async (tx) => {
        await insertEvent(tx.db, { id, propertyId: property.id, clientId: caller.clientId, provider: caller.provider, event, now: deps.clock.now() });
        await tx.enqueue(RESERVATION_EVENTS_QUEUE, { eventId: id, propertyId: property.id, externalReference: event.externalReference }, { retryLimit: 5, retryDelay: 5, retryBackoff: true });
      });
      return { eventId: id, status: "QUEUED" };
    },

    async getReservationEvent(principal: Principal | undefined, propertyCode: string, eventId: string): Promise<StoredEvent> {
      const caller = client(principal);
      const property = await propertyInReach(deps.pool, caller, propertyCode);
      const found = isUuid(eventId) ? await findEvent(deps.pool, property.id, caller.clientId, eventId) : undefined;
      if (found === undefined) throw new AppError("not_found", `Reservation event ${eventId} was not found.`);
      return found;
    },
  };
}

export type ConnectivityService = ReturnType<typeof createConnectivityService>;
