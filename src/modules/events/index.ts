export {
  recordEvent,
  recordEvents,
  eventTypes,
  type EventType,
  type NewEvent,
  type EventFanoutJob,
  type ReservationEventData,
  type RoomLineEventData,
  type AvailabilityEventData,
} from "./events.service.ts";
