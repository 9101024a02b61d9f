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
