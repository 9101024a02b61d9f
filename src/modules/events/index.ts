import type { Deps, Module } from "../module.ts";
import { EventService } from "../../../gen/hotelops/event/v1/event_pb.js";
import { createListen } from "../../jobs/listen-session.ts";
import { registerEventRpc } from "./events.rpc.ts";
import { createEventStreamHub } from "./stream.hub.ts";
import { eventChannel } from "./stream.repository.ts";

export {
  recordEvent,
  recordEvents,
  recordPartnerEvents,
  purgePartnerEventsBefore,
  partnerEventRetentionDays,
  partnerEventTypes,
  type NewPartnerEvent,
  eventTypes,
  type EventType,
  type NewEvent,
  type ReservationEventData,
  type RoomLineEventData,
  type AvailabilityEventData,
  type PaymentEventData,
  type InvoiceEventData,
} from "./events.service.ts";
export { eventCatalogue, type CatalogueType, type EventDataOf } from "./catalogue.ts";
export { domainEventSql, domainEventsByIdsSql, partnerEventsByIdsSql } from "./sql.ts";

/**
 * The event stream's face (EventService): one hub per API process, woken by one LISTEN session on the channel
 * recordEvents notifies at commit. Without the session (it could not connect at start) feeds still read at the
 * keep-alive pace.
 */
export function createEventsModule(deps: Deps): Module {
  const hub = createEventStreamHub(deps.db.pool, deps.config.eventStream, deps.logger);
  let listening: Promise<{ close(): Promise<void> } | undefined> | undefined;
  return {
    name: "events",
    services: [EventService],
    registerRpc(router) {
      registerEventRpc(router, hub);
      listening = createListen(deps.db.sessionUrl, deps.logger)(
        eventChannel,
        (propertyId) => hub.wake(propertyId),
        () => hub.wakeAll(),
      ).catch((err: unknown) => {
        deps.logger.warn({ err }, "event stream LISTEN session failed to start; feeds read at the keep-alive pace");
        return undefined;
      });
    },
    closeStreams: () => hub.close(),
    async stop() {
      hub.close();
      await (await listening)?.close();
    },
  };
}
