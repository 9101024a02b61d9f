/** Every pg-boss queue of the service, in one place. */
export const queues = {
  /** Used by the foundation tests to prove transactional enqueue and LISTEN/NOTIFY latency. */
  selfTest: "system.self-test",
  /** One job per event-log row (data: `{ eventId }`), enqueued with the row; the webhook fan-out works it. */
  eventsFanout: "events.fanout",
  /** Scheduled every 5 minutes: deletes expired idempotency keys and old rate-limit windows. */
  platformPurge: "platform.purge",
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];
