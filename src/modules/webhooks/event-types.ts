import { eventCatalogue, eventTypes, partnerEventTypes, type EventType } from "../events/index.ts";

/** The event types of the spec an address can subscribe to: every type the event log carries. `webhook.test` is always allowed (never listed). */
export const subscribableEventTypes = eventTypes;
export type SubscribableEventType = EventType;

export const testEventType = "webhook.test";

/**
 * What a type means, from the event catalogue (the one source of the OpenAPI document, the API and the panel):
 * Turkish when the caller's Accept-Language prefers it, else English.
 */
export function eventTypeDescription(type: SubscribableEventType, acceptLanguage: string | null): string {
  const entry = eventCatalogue[type];
  return /^\s*tr\b/i.test(acceptLanguage ?? "") ? entry.summaryTr : entry.summary;
}

export function isSubscribable(type: string): type is SubscribableEventType {
  return (subscribableEventTypes as readonly string[]).includes(type);
}

/** Domain events a partner callback may subscribe to: bookings of the properties granted to its client. */
export const partnerDomainEventTypes = ["reservation.created", "reservation.updated", "reservation.cancelled"] as const;

/** What a partner callback may subscribe to: its own events and the bookings of its properties. */
export const partnerCallbackEventTypes = [...partnerEventTypes, ...partnerDomainEventTypes] as const;

export function isPartnerCallbackType(type: string): boolean {
  return (partnerCallbackEventTypes as readonly string[]).includes(type);
}
