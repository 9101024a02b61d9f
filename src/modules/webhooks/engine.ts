import type pg from "pg";
import type { Transact } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { partnerEventRetentionDays, purgePartnerEventsBefore } from "../events/index.ts";
import type { AddressPolicy, Resolver } from "./address.ts";
import { createFailureRecorder, outcomeOf, type AttemptOutcome } from "./attempt-outcome.ts";
import { createAttemptRequests, newBatchMemo, type PartnerRoomTypeCodes, type Ready } from "./attempt-request.ts";
import { insertInterruptedAttempts, recordSuccesses as recordBatch } from "./attempts.repository.ts";
import type { Random } from "./schedule.ts";
import type { SecretBox } from "./secrets.ts";
import type { SendResult, Sender } from "./sender.ts";
import { createGate, maxPermitWaitMs, minSlackMs, type Pacing, type Slot } from "./pacing.ts";
import * as repo from "./deliveries.repository.ts";
import type { Claimed, Finished } from "./deliveries.repository.ts";

const dayMs = 24 * 60 * 60 * 1000;

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

export type WebhookEngine = ReturnType<typeof createWebhookEngine>;

/**
 * Fan-out, attempts, retries and auto-close, in batches: a batch of deliveries is claimed in one statement,
 * sent concurrently, and its successes are recorded in one statement (a failure settles in its own
 * transaction: it may close the address). Every decision reads time from the injected clock.
 */
export function createWebhookEngine(d: EngineDeps) {
  const { prepare } = createAttemptRequests(d);
  const { recordOne } = createFailureRecorder(d);

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

  /** Makes the claimed attempts concurrently and records them; outcomes in the order of `claimed`. */
  async function run(claimed: Claimed[], now: Date): Promise<AttemptOutcome[]> {
    if (claimed.length === 0) return [];
    // A lapsed lease means the previous holder died mid-attempt: the receiver may or may not have seen it.
    const interrupted = claimed.filter((c) => c.lapsed_lease !== null);
    if (interrupted.length > 0) await insertInterruptedAttempts(d.pool, interrupted);
    // Rows of one claim statement: one snapshot, so one body per event and one key set per address.
    const memo = newBatchMemo();
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
        f.result.errorClass === null && !f.c.is_test ? outcomeOf(f, "succeeded", undefined) : recordOne(f, now),
      ),
    );
  }

  /** One statement for the batch; if it fails, each success on its own, so one bad row does not undo the others. */
  async function recordSuccesses(successes: Finished[], now: Date): Promise<void> {
    try {
      await recordBatch(d.pool, successes, now);
    } catch (err) {
      if (successes.length === 1) throw err;
      d.logger.warn({ err }, "webhook batch record failed; recording one by one");
      for (const f of successes) {
        // still pending and leased if this fails too: retried once the lease lapses (at least once)
        await recordBatch(d.pool, [f], now).catch((e: unknown) =>
          d.logger.error({ err: e, deliveryId: f.c.id }, "webhook success not recorded"),
        );
      }
    }
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
