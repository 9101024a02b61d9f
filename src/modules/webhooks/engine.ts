import type pg from "pg";
import { recordChange } from "../audit/index.ts";
import type { Transact, Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Logger } from "../../lib/logger.ts";
import { partnerEventRetentionDays, purgePartnerEventsBefore, type EventDataOf } from "../events/index.ts";
import { insertNotification } from "../notifications/index.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver, type VerifiedTarget } from "./address.ts";
import { deliveryHeaders, envelopeBody, maxBodyBytes } from "./envelope.ts";
import { partnerDomainEventTypes, testEventType } from "./event-types.ts";
import { deliveryWindowMs, nextAttemptAt, type Random } from "./schedule.ts";
import type { SecretBox } from "./secrets.ts";
import type { SendResult, Sender } from "./sender.ts";
import { ed25519PrivateKey, signingKeys, type SigningKeys } from "./standard-signature.ts";
import { createGate, maxPermitWaitMs, minSlackMs, type Pacing, type Slot } from "./pacing.ts";
import * as repo from "./deliveries.repository.ts";
import type { Claimed, Finished } from "./deliveries.repository.ts";

const dayMs = 24 * 60 * 60 * 1000;

/** Auto-close rule: no success for this long and at least `closeAfterFailures` failed attempts. */
const closeAfterMs = 24 * 60 * 60 * 1000;
const closeAfterFailures = 5;

export interface EngineDeps {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  sender: Sender;
  resolver: Resolver;
  policy: AddressPolicy;
  random: Random;
  /** Total time budget of one request (10 s; tests shorten it). */
  timeoutMs: number;
  /** How long a claimed attempt is held before another worker may take it over (outlives the timeout). */
  leaseMs: number;
  /** Retry delays (production: retryDelaysMs; a real-clock test may configure a short one). */
  schedule: readonly number[];
  pacing: Pacing;
  /** Called when a retry or a deferred delivery was scheduled, so the dispatcher of this process re-plans. */
  onScheduled: (at: Date) => void;
  /** A partner client's room type codes at a property (connectivity's mappings; app.ts passes them in). */
  partnerCodes: PartnerRoomTypeCodes;
}

/** Our room type code -> a partner client's code at one property (only the mapped ones). */
export type PartnerRoomTypeCodes = (clientId: string, propertyId: string) => Promise<Map<string, string>>;

/** An attempt's request, made and signed. */
interface Ready {
  c: Claimed;
  body: Buffer;
  target: VerifiedTarget;
  headers: Record<string, string>;
  /** Spent preparing it (counts against the request's time budget). */
  preparedMs: number;
}

export interface AttemptOutcome extends SendResult {
  deliveryId: string;
  attempt: number;
  /** The delivery's state after this attempt. */
  status: "pending" | "succeeded" | "failed" | "cancelled";
  nextAttemptAt: Date | undefined;
  /** When the event was written (attempt 1's delay from it is the commit-to-first-attempt latency). */
  eventCreatedAt: Date | null;
}

export type WebhookEngine = ReturnType<typeof createWebhookEngine>;

/** ed25519 keys are sealed bound to the address and their purpose (a ciphertext cannot move to the secret column). */
export const ed25519Aad = (endpointId: string) => `${endpointId}:ed25519`;

/** What attempts of one batch share: one body per event, one key set per address, one address check per URL. */
interface BatchMemo {
  bodies: Map<string, Promise<Buffer | undefined>>;
  keys: Map<string, SigningKeys>;
  targets: Map<string, Promise<VerifiedTarget>>;
}

/**
 * Fan-out, attempts, retries and auto-close, in batches: a batch of deliveries is claimed in one statement,
 * sent concurrently, and its successes are recorded in one statement (a failure settles in its own
 * transaction: it may close the address). Every decision reads time from the injected clock.
 */
export function createWebhookEngine(d: EngineDeps) {
  /**
   * One delivery per OPEN address of each event's property subscribed to its type, created with attempt 1
   * already claimed, which is then made at once. An event fanned out before creates nothing (unique index).
   */
  async function fanOut(eventIds: readonly string[]): Promise<AttemptOutcome[]> {
    const pairs = await repo.subscribedPairs(d.pool, eventIds);
    // While the partner API is off platform-wide nothing is sent, and nothing piles up to be sent later.
    if (pairs.length === 0) return [];
    const now = d.clock.now();
    // The address and the platform switch are checked again by the insert, which is the claim.
    const rows = await repo.insertClaimed(d.pool, pairs, now, new Date(now.getTime() + d.leaseMs));
    return run(rows, now);
  }

  /**
   * A booking sent to a partner's callback address names its room types in the partner's codes (ours where it has
   * no mapping), as the partner's reads do; a hotel address gets the event as stored.
   */
  const inPartnerCodes = (c: Claimed): c is Claimed & { client_id: string } =>
    c.client_id !== null && !c.is_test && (partnerDomainEventTypes as readonly string[]).includes(c.event_type);

  async function dataOf(c: Claimed): Promise<unknown> {
    if (!inPartnerCodes(c)) return c.ev_data;
    const data = c.ev_data as EventDataOf<"reservation.created">;
    const codes = await d.partnerCodes(c.client_id, c.property_id);
    return { ...data, roomTypes: [...new Set(data.roomTypes.map((code) => codes.get(code) ?? code))].sort() };
  }

  async function bodyOf(c: Claimed): Promise<Buffer | undefined> {
    if (c.is_test) {
      return envelopeBody({
        id: c.event_id,
        type: testEventType,
        createdAt: c.created_at,
        occurredAt: c.created_at,
        propertyCode: c.property_code,
        data: {
          endpointId: c.endpoint_id,
          message: "Test event sent from the panel (connection verify).",
        } satisfies EventDataOf<"webhook.test">,
      });
    }
    if (c.ev_created_at === null || c.ev_occurred_at === null) return undefined;
    return envelopeBody({
      id: c.event_id,
      type: c.event_type,
      createdAt: c.ev_created_at,
      occurredAt: c.ev_occurred_at,
      propertyCode: c.property_code,
      data: await dataOf(c),
    });
  }

  function keysOf(c: Claimed, now: Date): SigningKeys {
    const overlap = c.previous_secret_expires_at !== null && c.previous_secret_expires_at > now;
    const secrets = [d.box.open(c.secret_sealed, c.endpoint_id)];
    if (overlap && c.previous_secret_sealed !== null) secrets.push(d.box.open(c.previous_secret_sealed, c.endpoint_id));
    const ed25519 = [];
    if (c.ed25519_key_sealed !== null)
      ed25519.push(ed25519PrivateKey(d.box.open(c.ed25519_key_sealed, ed25519Aad(c.endpoint_id))));
    if (overlap && c.ed25519_key_sealed !== null && c.previous_ed25519_key_sealed !== null) {
      ed25519.push(ed25519PrivateKey(d.box.open(c.previous_ed25519_key_sealed, ed25519Aad(c.endpoint_id))));
    }
    return signingKeys(secrets, ed25519);
  }

  /** Makes the claimed attempts concurrently and records them; outcomes in the order of `claimed`. */
  async function run(claimed: Claimed[], now: Date): Promise<AttemptOutcome[]> {
    if (claimed.length === 0) return [];
    // A lapsed lease means the previous holder died mid-attempt: the receiver may or may not have seen it.
    const interrupted = claimed.filter((c) => c.lapsed_lease !== null);
    if (interrupted.length > 0) await repo.insertInterruptedAttempts(d.pool, interrupted);
    // Rows of one claim statement: one snapshot, so one body per event and one key set per address.
    const memo: BatchMemo = { bodies: new Map(), keys: new Map(), targets: new Map() };
    const deferred: { c: Claimed; at: Date }[] = [];
    const all: Finished[] = [];
    const finish = (c: Claimed, result: SendResult | { deferMs: number }) => {
      if ("deferMs" in result) deferred.push({ c, at: new Date(d.clock.now().getTime() + result.deferMs) });
      else all.push({ c, result, finishedAt: d.clock.now() });
    };
    // Everything a request needs (body, address check, signatures) is made first, so a start slot is not spent
    // preparing. One delivery that cannot even be prepared fails alone (and runs into the attempt caps).
    const ready: Ready[] = [];
    await Promise.all(
      claimed.map(async (c) => {
        const p = await prepare(c, now, memo).catch((err: unknown): SendResult => {
          d.logger.error({ err, deliveryId: c.id, endpointId: c.endpoint_id }, "webhook attempt could not be made");
          return {
            httpStatus: null,
            durationMs: 0,
            errorClass: "internal",
            errorMessage: "the service could not prepare this attempt",
          };
        });
        if ("headers" in p) ready.push(p);
        else finish(c, p);
      }),
    );
    // The address's pacing, shared by every process: start slots and permits reserved for the batch in one
    // statement; what gets none goes back to the queue (waiting is not an attempt). A test delivery is one
    // button press: it skips the pacing.
    const byAddress = new Map<string, Ready[]>();
    const work: Promise<void>[] = [];
    for (const r of ready) {
      if (r.c.is_test) {
        work.push(send(r).then((result) => finish(r.c, result)));
        continue;
      }
      const group = byAddress.get(r.c.endpoint_id);
      if (group === undefined) byAddress.set(r.c.endpoint_id, [r]);
      else group.push(r);
    }
    if (byAddress.size > 0) {
      const { grants, token } = await d.pacing.reserve(
        [...byAddress].map(([endpointId, group]) => ({
          endpointId,
          wanted: group.length,
          perSecond: group[0]!.c.max_per_second,
          concurrency: group[0]!.c.max_concurrency,
        })),
        maxPermitWaitMs,
      );
      for (const [endpointId, group] of byAddress) {
        const grant = grants.get(endpointId);
        const starts = grant?.startsAt ?? [];
        for (const r of group.slice(starts.length)) finish(r.c, { deferMs: grant?.deferMs ?? 1000 });
        if (starts.length === 0) continue;
        const gate = createGate(grant!.permits);
        const slack = Math.max(500 / group[0]!.c.max_per_second, minSlackMs);
        work.push(
          Promise.all(
            group.slice(0, starts.length).map(async (r, i) => {
              const startAt = starts[i]!;
              finish(r.c, await paced(r, { startAt, latestAt: startAt + slack, gate }));
            }),
          )
            .then(() => undefined)
            .finally(() =>
              d.pacing
                .release(endpointId, token)
                .catch((err: unknown) =>
                  d.logger.warn({ err, endpointId }, "webhook permits not released (they expire)"),
                ),
            ),
        );
      }
    }
    await Promise.all(work);
    // Handed back unmade (no slot or permit soon enough, or a pause): not an attempt, due when its slot comes.
    if (deferred.length > 0) {
      await repo.deferClaimed(d.pool, deferred);
      d.onScheduled(new Date(Math.min(...deferred.map((x) => x.at.getTime()))));
    }
    const order = new Map(claimed.map((c, i) => [c, i]));
    const finished = all.sort((a, b) => order.get(a.c)! - order.get(b.c)!);
    const successes = finished.filter((f) => f.result.errorClass === null && !f.c.is_test);
    if (successes.length > 0) await recordSuccesses(successes, now);
    return Promise.all(
      finished.map((f) =>
        f.result.errorClass === null && !f.c.is_test ? outcome(f, "succeeded", undefined) : recordOne(f, now),
      ),
    );
  }

  /** One statement for the batch; if it fails, each success on its own, so one bad row does not undo the others. */
  async function recordSuccesses(successes: Finished[], now: Date): Promise<void> {
    try {
      await repo.recordSuccesses(d.pool, successes, now);
    } catch (err) {
      if (successes.length === 1) throw err;
      d.logger.warn({ err }, "webhook batch record failed; recording one by one");
      for (const f of successes) {
        // still pending and leased if this fails too: retried once the lease lapses (at least once)
        await repo
          .recordSuccesses(d.pool, [f], now)
          .catch((e: unknown) => d.logger.error({ err: e, deliveryId: f.c.id }, "webhook success not recorded"));
      }
    }
  }

  function outcome(f: Finished, status: AttemptOutcome["status"], next: Date | undefined): AttemptOutcome {
    return {
      ...f.result,
      deliveryId: f.c.id,
      attempt: f.c.attempts,
      status,
      nextAttemptAt: status === "pending" ? next : undefined,
      eventCreatedAt: f.c.ev_created_at,
    };
  }

  /** The request of an attempt, ready to go: what remains is waiting for its slot and sending. */
  async function prepare(c: Claimed, now: Date, memo: BatchMemo): Promise<Ready | SendResult> {
    // One body per event, or per event and partner client where it is in the client's codes.
    const bodyKey = c.is_test ? c.id : inPartnerCodes(c) ? `${c.event_id}:${c.client_id}` : c.event_id;
    let made = memo.bodies.get(bodyKey);
    if (made === undefined) memo.bodies.set(bodyKey, (made = bodyOf(c)));
    const body = await made;
    if (body === undefined)
      return { httpStatus: null, durationMs: 0, errorClass: "connection", errorMessage: "the event no longer exists" };
    if (body.length > maxBodyBytes) {
      return {
        httpStatus: null,
        durationMs: 0,
        errorClass: "payload_too_large",
        errorMessage: `the event body is ${body.length} bytes; the limit is ${maxBodyBytes}`,
      };
    }
    const started = performance.now();
    let target;
    try {
      // The address rules hold at every attempt, not only at creation (DNS answers change): checked once per
      // URL and batch, whose attempts all start now.
      let check = memo.targets.get(c.url);
      if (check === undefined) memo.targets.set(c.url, (check = verifyTarget(c.url, d.policy, d.resolver)));
      target = await check;
    } catch (err) {
      if (!(err instanceof AddressRejected)) throw err;
      return {
        httpStatus: null,
        durationMs: Math.round(performance.now() - started),
        errorClass: "address_rejected",
        errorMessage: err.message,
      };
    }
    let keys = memo.keys.get(c.endpoint_id);
    if (keys === undefined) memo.keys.set(c.endpoint_id, (keys = keysOf(c, now)));
    // Signed now: the timestamp is at most the 2 s of a slot wait old when the request goes out.
    const headers = deliveryHeaders({
      body,
      keys,
      unixSeconds: Math.floor(d.clock.now().getTime() / 1000),
      eventId: c.event_id,
      eventType: c.is_test ? testEventType : c.event_type,
      deliveryId: c.id,
      attempt: c.attempts,
    });
    return { c, body, target, headers, preparedMs: performance.now() - started };
  }

  /** Waits for the delivery's start slot and a permit of its address, then sends. */
  async function paced(r: Ready, slot: Slot): Promise<SendResult | { deferMs: number }> {
    const wait = slot.startAt - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const queued = performance.now();
    await slot.gate.acquire();
    try {
      // A Retry-After seen meanwhile: back to the queue, due when the receiver asked.
      const paused = d.pacing.pausedMs(r.c.endpoint_id);
      if (paused > 0) return { deferMs: paused };
      // Waited for a permit past its slot (the receiver answers slowly): starting now would crowd the next slots.
      const t = performance.now();
      if (t - queued > 1 && t > slot.latestAt) return { deferMs: 0 };
      await d.pacing.admitStart(r.c.endpoint_id, r.c.max_per_second);
      return await send(r);
    } finally {
      slot.gate.release();
    }
  }

  /** Preparing counts against the request budget; waiting for the address's turn does not. */
  async function send(r: Ready): Promise<SendResult> {
    const result = await d.sender.send({
      target: r.target,
      headers: r.headers,
      body: r.body,
      timeoutMs: Math.max(1, Math.round(d.timeoutMs - r.preparedMs)),
    });
    return { ...result, durationMs: result.durationMs + Math.round(r.preparedMs) };
  }

  /** A failed attempt or a test delivery: the attempt row, the address's health, the delivery settled, the retry queued. */
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
      // Real-time id: history is ordered by (started_at, id) and the test clock may stand still.
      await tx.query(
        `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) on conflict (delivery_id, attempt) do nothing`,
        [
          newId(),
          c.property_id,
          c.endpoint_id,
          c.id,
          c.event_id,
          c.is_test ? testEventType : c.event_type,
          c.attempts,
          r.httpStatus,
          r.durationMs,
          r.errorClass,
          r.errorMessage,
          startedAt,
          now,
        ],
      );
      // The address row first (it serializes concurrent attempts of one address), then the delivery.
      const open = c.is_test
        ? true
        : gone
          ? await closeEndpoint(tx, c, now, "The receiver answered 410 Gone: the address was disabled at once.")
          : await updateHealth(tx, c, startedAt, now);
      const settled = status === "pending" && !open ? "cancelled" : status;
      // Only the holder of this attempt may settle it (a lease taken over after a crash moves `attempts` on).
      await tx.query(
        `update webhook_deliveries set status = $2, next_attempt_at = $3, lease_until = null, last_http_status = $4, last_error_class = $5
         where id = $1 and attempts = $6 and status = 'pending'`,
        [c.id, settled, settled === "pending" ? next : null, r.httpStatus, r.errorClass, c.attempts],
      );
      return settled;
    });
    // The dispatcher starts it on time (pg-boss's startAfter is only seen at its next poll); the every-minute
    // sweeper is the fallback when this process dies before then.
    if (finalStatus === "pending" && next !== undefined) d.onScheduled(next);
    return outcome(f, finalStatus, next);
  }

  /** A failure may close the address (24 h without success, >= 5 failures). Returns whether it is still open. */
  async function updateHealth(tx: Tx, c: Claimed, startedAt: Date, now: Date): Promise<boolean> {
    const [health] = await tx.query<{ failing_since: Date; failures_since_success: number; status: string }>(
      `update webhook_endpoints set failing_since = coalesce(failing_since, $2), failures_since_success = failures_since_success + 1
       where id = $1 returning failing_since, failures_since_success, status`,
      [c.endpoint_id, startedAt],
    );
    if (health === undefined || health.status !== "open") return false;
    if (
      health.failures_since_success < closeAfterFailures ||
      now.getTime() - health.failing_since.getTime() < closeAfterMs
    )
      return true;
    return closeEndpoint(
      tx,
      c,
      now,
      `No successful response for 24 hours (${health.failures_since_success} failed attempts).`,
    );
  }

  /** Closes the address: pending deliveries stop, its creator gets a panel notification and an e-mail. Returns false (not open). */
  async function closeEndpoint(tx: Tx, c: Claimed, now: Date, reason: string): Promise<false> {
    const [closed] = await tx.query<{ created_by: string | null; url: string }>(
      "update webhook_endpoints set status = 'closed', closed_at = $2, closed_reason = $3, updated_at = $2 where id = $1 and status = 'open' returning created_by, url",
      [c.endpoint_id, now, reason],
    );
    await tx.query(
      "update webhook_deliveries set status = 'cancelled', next_attempt_at = null, last_error_class = 'endpoint_closed' where endpoint_id = $1 and status = 'pending' and id <> $2",
      [c.endpoint_id, c.id],
    );
    if (closed !== undefined)
      recordChange(tx, {
        propertyId: c.property_id,
        entity: "webhook_endpoint",
        entityId: c.endpoint_id,
        action: "close",
        before: { status: "open" },
        after: { status: "closed", closedReason: reason },
      });
    if (closed !== undefined && closed.created_by !== null) {
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
    if (closed !== undefined)
      d.logger.warn(
        { endpointId: c.endpoint_id, propertyId: c.property_id, reason },
        "webhook address closed automatically",
      );
    return false;
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

  /** One attempt of each given delivery that is due and held by nobody (what a webhooks.deliver batch runs). */
  async function attempt(deliveryIds: readonly string[]): Promise<AttemptOutcome[]> {
    if (deliveryIds.length === 0) return [];
    const now = d.clock.now();
    return run(await repo.claim(d.pool, deliveryIds, now, new Date(now.getTime() + d.leaseMs)), now);
  }

  return {
    /** What an events.fanout batch runs: the deliveries of each event, attempt 1 of each at once. */
    fanOut,
    attempt,
    /** Queues an attempt job for every due delivery (the every-minute sweeper; also takes over crashed workers' claims). */
    async sweepDue(): Promise<number> {
      const ids = await repo.dueDeliveryIds(d.pool, d.clock.now());
      if (ids.length > 0)
        await d.transact((tx) =>
          tx.enqueueMany(
            queues.webhooksDeliver,
            ids.map((deliveryId) => ({ deliveryId })),
          ),
        );
      return ids.length;
    },
    /** Runs every due attempt right here (tests move the clock, then call this instead of waiting for jobs). */
    async runDue(): Promise<AttemptOutcome[]> {
      return attempt(await repo.dueDeliveryIds(d.pool, d.clock.now()));
    },
    /**
     * Deletes history older than 30 days (attempt rows and finished deliveries), then the partner events older
     * than their retention (the events module's log, read by nothing once their history is gone).
     */
    async purge(): Promise<{ attempts: number; deliveries: number; partnerEvents: number }> {
      const now = d.clock.now().getTime();
      const history = await repo.purgeBefore(d.pool, new Date(now - 30 * dayMs));
      const partnerEvents = await purgePartnerEventsBefore(d.pool, new Date(now - partnerEventRetentionDays * dayMs));
      return { ...history, partnerEvents };
    },
  };
}
