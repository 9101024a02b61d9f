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
  /** Daily: deletes webhook delivery history older than 30 days and partner events older than 31 days. */
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
  /**
   * One job per step of an e-document's delivery (data: `{ propertyId, invoiceId }`), the first enqueued with the
   * issuing transaction: the delivery row's status says what the step does (QUEUED: upload, SENT: ask the status,
   * CANCELLING: cancel at the integrator). Worked only where EDOCUMENT_INTEGRATOR_URL is set.
   */
  invoiceDelivery: "invoices.delivery",
  /** Daily and at start: creates the audit trail's monthly partitions ahead and drops those past retention. */
  auditPartitions: "audit.partitions",
  /** Daily and at start: anonymises guest profiles whose last stay is past the retention period (GUEST_RETENTION_YEARS). */
  guestRetention: "guests.retention",
  /**
   * One job per guest report to the authority (KBS; data: `{ reportId }`), enqueued with the check-in or check-out
   * that made it; worked only where KBS_SENDER is https or file (elsewhere the jobs wait and the guests are listed
   * as unreported). Retried with backoff (KBS_RETRY_*), then the report is recorded failed.
   */
  guestReporting: "guests.reporting",
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];

/**
 * How soon a job runs again, per queue, in seconds (stated in docs/operations/workers-and-pgbouncer.md; met on the
 * real clock by test/production/takeover.test.ts and test/jobs/lost-job.test.ts for partner messages,
 * test/webhooks/crash.test.ts for webhook attempts, test/crash/e-document-delivery.test.ts for e-documents and
 * test/crash/job-takeover.test.ts for event fan-out, staff e-mail and option expiry):
 * - `afterKill`: from a worker's kill -9 (or lost host) to the job done by another worker: its heartbeat late
 *   (at most JOB_HEARTBEAT_SECONDS), the next supervisor pass (SUPERVISE_SECONDS), the first retry delay and the
 *   queue's poll (src/jobs/boss.ts), plus the work itself.
 * - `afterOutage`: from the moment the database answers again to a job that was in flight when it went away done:
 *   its failure was recorded (then the retry delay, at most 10 s) or could not be (then the heartbeat is late and the
 *   next supervisor pass fails it), then the poll.
 * A webhook attempt whose outcome was lost (its worker killed, or the database away when it ended) keeps its lease
 * (25 s from its claim): the every-minute sweeper queues it again once the lease lapsed, so event fan-out and webhook
 * attempts are bounded by the lease and the sweep (85 s), not by the job's own retry.
 * Scheduled queues (`webhooks.sweep`, `platform.purge`, `webhooks.purge`) are not taken over: their next run does
 * the work.
 */
export const takeoverBounds: Record<QueueName, { afterKill: number; afterOutage: number } | "next run"> = {
  [queues.partnerMessages]: { afterKill: 25, afterOutage: 15 },
  [queues.eventsFanout]: { afterKill: 90, afterOutage: 90 },
  [queues.webhooksDeliver]: { afterKill: 90, afterOutage: 90 },
  [queues.webhooksRecover]: { afterKill: 45, afterOutage: 30 },
  [queues.webhooksEndpointClosed]: { afterKill: 90, afterOutage: 75 },
  [queues.notificationsEmail]: { afterKill: 90, afterOutage: 75 },
  // the first retry 5-10 s after the heartbeat is found late, polled every second
  [queues.reservationOptionExpiry]: { afterKill: 40, afterOutage: 30 },
  [queues.invoiceDelivery]: { afterKill: 45, afterOutage: 30 },
  // with the default first retry delay (KBS_RETRY_DELAY_SECONDS, 30 s); a longer delay lengthens both
  [queues.guestReporting]: { afterKill: 90, afterOutage: 75 },
  [queues.platformPurge]: "next run",
  [queues.webhooksSweep]: "next run",
  [queues.webhooksPurge]: "next run",
  [queues.auditPartitions]: "next run",
  [queues.guestRetention]: "next run",
};
