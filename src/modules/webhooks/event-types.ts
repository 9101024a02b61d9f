import { eventTypes, type EventType } from "../events/index.ts";

/** The event types of the spec an address can subscribe to: every type the event log carries. `webhook.test` is always allowed (never listed). */
export const subscribableEventTypes = eventTypes;
export type SubscribableEventType = EventType;

export const testEventType = "webhook.test";

export function isSubscribable(type: string): type is SubscribableEventType {
  return (subscribableEventTypes as readonly string[]).includes(type);
}
