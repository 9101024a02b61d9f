import { eventTypes, type EventType } from "../events/index.ts";

/** The event types of the spec an address can subscribe to: every type the event log carries. `webhook.test` is always allowed (never listed). */
export const subscribableEventTypes = eventTypes;
export type SubscribableEventType = EventType;

export const testEventType = "webhook.test";

/** What each type means, as the panel shows it next to the checkbox (English; the panel translates by type). */
export const eventTypeDescriptions: Record<SubscribableEventType, string> = {
  "reservation.created": "A new reservation is saved (panel, mobile app, channel or API).",
  "reservation.updated": "Dates, guest counts, status or other reservation fields change.",
  "reservation.cancelled": "A reservation moves to cancelled status.",
  "guest.checked_in": "Check-in is completed for a room line.",
  "guest.checked_out": "Check-out is completed for a room line.",
  "folio.payment_posted": "A payment or a payment reversal is posted to the folio.",
  "invoice.issued": "A draft invoice is finalized or sent as an e-document.",
  "availability.changed":
    "A reservation or room block may affect availability (a hint: read the current numbers from the availability API).",
};

export function isSubscribable(type: string): type is SubscribableEventType {
  return (subscribableEventTypes as readonly string[]).includes(type);
}
