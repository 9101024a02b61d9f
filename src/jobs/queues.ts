/** Every pg-boss queue of the service, in one place (each is created at start with `notify: true`). */
export const queues = {
  /**
   * One job per (property, external reference) key of inbound partner messages (data: `{ propertyId,
   * externalReference }`), enqueued with the message row; the connectivity worker applies the key's messages in
   * arrival order. The queue keeps its first name so jobs already queued by a running version are still worked.
   */
  partnerMessages: "connectivity.reservation-events",
  /** One job per outbound domain event (`domain_events` row, data: `{ eventId }`), enqueued with the row; the webhook fan-out works it. */
  eventsFanout: "events.fanout",
  /** Scheduled every 5 minutes: deletes expired idempotency keys and old rate-limit windows. */
  platformPurge: "platform.purge",
  /** One attempt of one webhook delivery (data: `{ deliveryId }`): resends and the sweeper's due work (retries start from the dispatcher). */
  webhooksDeliver: "webhooks.deliver",
  /** Every minute: queues due webhook retries and takes over attempts of crashed workers. */
  webhooksSweep: "webhooks.sweep",
  /** Daily: deletes webhook delivery history older than 30 days. */
  webhooksPurge: "webhooks.purge",
  /** Lists the events a webhook recovery re-sends and creates their deliveries (data: `{ recoveryId }`). */
  webhooksRecover: "webhooks.recover",
  /** E-mails the creator of a webhook address that was closed automatically (data: `{ endpointId }`). */
  webhooksEndpointClosed: "webhooks.endpoint-closed",
  /** E-mails one panel notification of a staff alert to its user (data: `{ notificationId }`), e.g. an overbooking. */
  notificationsEmail: "notifications.email",
  /**
   * One job per option set on a TENTATIVE reservation (data: `{ propertyId, reservationId }`), enqueued with the
   * option and due at its `optionUntil`: cancels the reservation then when the option still stands unconfirmed.
   */
  reservationOptionExpiry: "reservations.option-expiry",
  /** Daily and at start: creates the audit trail's monthly partitions ahead and drops those past retention. */
  auditPartitions: "audit.partitions",
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];
