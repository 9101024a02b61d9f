import { recordChange } from "../audit/index.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Logger } from "../../lib/logger.ts";
import { insertNotification } from "../notifications/index.ts";
import { closeEndpoint, countFailure, insertAttempt, settleDelivery } from "./attempts.repository.ts";
import type { Claimed, Finished } from "./deliveries.repository.ts";
import type { Pacing } from "./pacing.ts";
import { deliveryWindowMs, nextAttemptAt, type Random } from "./schedule.ts";
import type { SendResult } from "./sender.ts";

/** Auto-close rule: no success for this long and at least `closeAfterFailures` failed attempts. */
const closeAfterMs = 24 * 60 * 60 * 1000;
const closeAfterFailures = 5;

export interface AttemptOutcome extends SendResult {
  deliveryId: string;
  attempt: number;
  /** The delivery's state after this attempt. */
  status: "pending" | "succeeded" | "failed" | "cancelled";
  nextAttemptAt: Date | undefined;
  /** When the event was written (attempt 1's delay from it is the commit-to-first-attempt latency). */
  eventCreatedAt: Date | null;
}

interface OutcomeDeps {
  transact: Transact;
  logger: Logger;
  random: Random;
  /** Retry delays (production: retryDelaysMs; a real-clock test may configure a short one). */
  schedule: readonly number[];
  pacing: Pacing;
  /** Called when a retry was scheduled, so the dispatcher of this process re-plans. */
  onScheduled: (at: Date) => void;
}

export function outcomeOf(f: Finished, status: AttemptOutcome["status"], next: Date | undefined): AttemptOutcome {
  return {
    ...f.result,
    deliveryId: f.c.id,
    attempt: f.c.attempts,
    status,
    nextAttemptAt: status === "pending" ? next : undefined,
    eventCreatedAt: f.c.ev_created_at,
  };
}

/**
 * A failed attempt or a test delivery, settled in its own transaction: the attempt row, the address's health
 * (a failure may close it), the delivery settled, the retry scheduled.
 */
export function createFailureRecorder(d: OutcomeDeps) {
  /** A failure may close the address (24 h without success, >= 5 failures). Returns whether it is still open. */
  async function updateHealth(tx: Tx, c: Claimed, startedAt: Date, now: Date): Promise<boolean> {
    const health = await countFailure(tx, c.endpoint_id, startedAt);
    if (health === undefined || health.status !== "open") return false;
    if (
      health.failures_since_success < closeAfterFailures ||
      now.getTime() - health.failing_since.getTime() < closeAfterMs
    )
      return true;
    return close(tx, c, now, `No successful response for 24 hours (${health.failures_since_success} failed attempts).`);
  }

  /** Closes the address: pending deliveries stop, its creator gets a panel notification and an e-mail. Returns false (not open). */
  async function close(tx: Tx, c: Claimed, now: Date, reason: string): Promise<false> {
    const closed = await closeEndpoint(tx, c.endpoint_id, c.id, now, reason);
    if (closed === undefined) return false;
    recordChange(tx, {
      propertyId: c.property_id,
      entity: "webhook_endpoint",
      entityId: c.endpoint_id,
      action: "close",
      before: { status: "open" },
      after: { status: "closed", closedReason: reason },
    });
    if (closed.created_by !== null) {
      const body = `${closed.url}: ${reason} Re-enable it in Integrations > API access > Webhook addresses.`;
      await insertNotification(
        tx,
        {
          propertyId: c.property_id,
          userId: closed.created_by,
          kind: "webhook.endpoint_closed",
          title: "Webhook address closed",
          body,
          data: { endpointId: c.endpoint_id },
        },
        now,
      );
      await tx.enqueue(queues.webhooksEndpointClosed, { endpointId: c.endpoint_id });
    }
    d.logger.warn(
      { endpointId: c.endpoint_id, propertyId: c.property_id, reason },
      "webhook address closed automatically",
    );
    return false;
  }

  /** The attempt row, the address's health, the delivery settled, the retry queued. */
  async function recordOne(f: Finished, startedAt: Date): Promise<AttemptOutcome> {
    const { c, result: r, finishedAt: now } = f;
    // Only a test delivery gets here with a success; it leaves the address's health alone.
    const ok = r.errorClass === null;
    const gone = r.httpStatus === 410 && !c.is_test;
    const permanent = r.errorClass === "payload_too_large" || c.is_test || gone;
    const scheduled =
      ok || permanent
        ? undefined
        : nextAttemptAt({
            attemptsMade: c.attempts,
            firstAttemptAt: c.first_attempt_at,
            now,
            random: d.random,
            delaysMs: d.schedule,
          });
    const next = scheduled === undefined ? undefined : honourRetryAfter(scheduled, r, c, now);
    if (r.retryAfterMs !== undefined && !c.is_test)
      await d.pacing
        .pause(c.endpoint_id, r.retryAfterMs)
        .catch((err: unknown) => d.logger.warn({ err, endpointId: c.endpoint_id }, "webhook pause not shared"));
    const status = ok ? "succeeded" : next === undefined ? "failed" : "pending";
    const finalStatus = await d.transact(async (tx) => {
      await insertAttempt(tx, f, startedAt);
      // The address row first (it serializes concurrent attempts of one address), then the delivery.
      const open = c.is_test
        ? true
        : gone
          ? await close(tx, c, now, "The receiver answered 410 Gone: the address was disabled at once.")
          : await updateHealth(tx, c, startedAt, now);
      const settled = status === "pending" && !open ? "cancelled" : status;
      await settleDelivery(tx, f, settled, settled === "pending" ? (next ?? null) : null);
      return settled;
    });
    // The dispatcher starts it on time (pg-boss's startAfter is only seen at its next poll); the every-minute
    // sweeper is the fallback when this process dies before then.
    if (finalStatus === "pending" && next !== undefined) d.onScheduled(next);
    return outcomeOf(f, finalStatus, next);
  }

  return { recordOne };
}

/**
 * A 429 or 503 with Retry-After: not before the receiver asked, but still inside the 24 h window (the last
 * moment of the window when the receiver asked for more).
 */
function honourRetryAfter(next: Date, r: SendResult, c: Claimed, now: Date): Date {
  if (r.retryAfterMs === undefined) return next;
  const asked = now.getTime() + r.retryAfterMs;
  if (asked <= next.getTime()) return next;
  return new Date(Math.min(asked, c.first_attempt_at.getTime() + deliveryWindowMs));
}
