/** Every pg-boss queue of the service, in one place. */
export const queues = {
  /** Used by the foundation tests to prove transactional enqueue and LISTEN/NOTIFY latency. */
  selfTest: "system.self-test",
} as const;

export type QueueName = (typeof queues)[keyof typeof queues];
