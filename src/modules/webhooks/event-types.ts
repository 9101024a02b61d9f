/** The event types of the spec an address can subscribe to. `webhook.test` is always allowed (never listed). */
export const subscribableEventTypes = [
  "reservation.created",
  "reservation.updated",
  "reservation.cancelled",
  "guest.checked_in",
  "guest.checked_out",
  "folio.payment_posted",
  "invoice.issued",
  "availability.changed",
] as const;
export type SubscribableEventType = (typeof subscribableEventTypes)[number];

export const testEventType = "webhook.test";

export function isSubscribable(type: string): type is SubscribableEventType {
  return (subscribableEventTypes as readonly string[]).includes(type);
}
