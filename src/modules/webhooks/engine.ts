import type pg from "pg";
import type { Transact, Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Logger } from "../../lib/logger.ts";
import { insertNotification } from "../notifications/index.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver } from "./address.ts";
import { deliveryHeaders, envelopeBody, maxBodyBytes } from "./envelope.ts";
import { asDate } from "./endpoints.repository.ts";
import { testEventType } from "./event-types.ts";
import { nextAttemptAt, type Random } from "./schedule.ts";
import type { SecretBox } from "./secrets.ts";
import type { SendResult, Sender } from "./sender.ts";

/** Auto-close rule: no success for this long and at least `closeAfterFailures` failed attempts. */
export const closeAfterMs = 24 * 60 * 60 * 1000;
export const closeAfterFailures = 5;

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
}

export interface AttemptOutcome extends SendResult {
  deliveryId: string;
  attempt: number;
  /** The delivery's state after this attempt. */
  status: "pending" | "succeeded" | "failed" | "cancelled";
  nextAttemptAt: Date | undefined;
}

interface Claimed {
  id: string;
  property_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  is_test: boolean;
  attempts: number;
  first_attempt_at: Date;
  lapsed_lease: Date | null;
  created_at: Date;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  property_code: string;
  ev_created_at: Date | null;
  ev_occurred_at: Date | null;
  ev_data: unknown;
}

export type WebhookEngine = ReturnType<typeof createWebhookEngine>;

/** Fan-out, one attempt at a time, retries and auto-close. Every decision reads time from the injected clock. */
export function createWebhookEngine(d: EngineDeps) {
  /** One delivery per OPEN address of the event's property subscribed to its type; attempt 1 queued at once. */
  async function fanOut(eventId: string): Promise<string[]> {
    return d.transact(async (tx) => {
      const [event] = await tx.query<{ property_id: string; type: string; enabled: boolean }>(
        "select e.property_id, e.type, ps.partner_api_enabled as enabled from events e cross join platform_settings ps where e.id = $1 and ps.id = 1",
        [eventId],
      );
      // While the partner API is off platform-wide nothing is sent, and nothing piles up to be sent later.
      if (event === undefined || !event.enabled) return [];
      const endpoints = await tx.query<{ id: string }>("select id from webhook_endpoints where property_id = $1 and status = 'open' and $2 = any(event_types)", [
        event.property_id,
        event.type,
      ]);
      if (endpoints.length === 0) return [];
      const now = d.clock.now();
      const ids = endpoints.map(() => newId(now.getTime()));
      const created = await tx.query<{ id: string }>(
        `insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at)
         select u.id, $1, u.endpoint_id, $2, $3, 'pending', $4, $4 from unnest($5::uuid[], $6::uuid[]) as u(id, endpoint_id)
         on conflict (endpoint_id, event_id) where resend_of is null and not is_test do nothing returning id`,
        [event.property_id, eventId, event.type, now, ids, endpoints.map((e) => e.id)],
      );
      // No job per delivery: the fan-out worker makes attempt 1 right after this commit (fanOutAndSend), and
      // the every-minute sweeper picks up any delivery whose worker died before or during it.
      return created.map((r) => r.id);
    });
  }

  /** Takes the attempt if the delivery is due and nobody holds it; cancels it if its address or the platform switch is off. */
  async function claim(deliveryId: string, now: Date): Promise<Claimed | undefined> {
    const { rows } = await d.pool.query<Claimed>(
      `with prev as (
         select dl.id, dl.lease_until from webhook_deliveries dl
         join webhook_endpoints ep on ep.id = dl.endpoint_id and ep.property_id = dl.property_id
         cross join platform_settings ps
         where dl.id = $1 and dl.status = 'pending' and dl.next_attempt_at <= $2 and (dl.lease_until is null or dl.lease_until <= $2)
           and (ep.status = 'open' or dl.is_test) and ps.id = 1 and ps.partner_api_enabled
         for update of dl skip locked
       ), upd as (
         update webhook_deliveries dl set attempts = dl.attempts + 1, lease_until = $3, first_attempt_at = coalesce(dl.first_attempt_at, $2), last_attempt_at = $2
         from prev where dl.id = prev.id
         returning dl.*, prev.lease_until as lapsed_lease
       )
       select upd.id, upd.property_id, upd.endpoint_id, upd.event_id, upd.event_type, upd.is_test, upd.attempts, upd.first_attempt_at, upd.lapsed_lease, upd.created_at,
              ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at, p.code as property_code,
              e.created_at as ev_created_at, e.occurred_at as ev_occurred_at, e.data as ev_data
       from upd join webhook_endpoints ep on ep.id = upd.endpoint_id join properties p on p.id = upd.property_id
       left join events e on e.id = upd.event_id and e.property_id = upd.property_id`,
      [deliveryId, now, new Date(now.getTime() + d.leaseMs)],
    );
    if (rows[0] !== undefined) return rows[0];
    // Not claimable: stop it for good when its address is no longer open or webhooks are off platform-wide.
    await d.pool.query(
      `update webhook_deliveries dl set status = 'cancelled', next_attempt_at = null, lease_until = null,
         last_error_class = case when not ps.partner_api_enabled then 'partner_api_disabled' else 'endpoint_closed' end
       from webhook_endpoints ep, platform_settings ps
       where dl.id = $1 and dl.status = 'pending' and ep.id = dl.endpoint_id and ps.id = 1
         and (not ps.partner_api_enabled or (ep.status <> 'open' and not dl.is_test))
         and (dl.lease_until is null or dl.lease_until <= $2)`,
      [deliveryId, now],
    );
    return undefined;
  }

  function bodyOf(c: Claimed): Buffer | undefined {
    if (c.is_test) {
      return envelopeBody({
        id: c.event_id,
        type: testEventType,
        createdAt: c.created_at,
        occurredAt: c.created_at,
        propertyCode: c.property_code,
        data: { endpointId: c.endpoint_id, message: "Test event sent from the panel (connection verify)." },
      });
    }
    if (c.ev_created_at === null || c.ev_occurred_at === null) return undefined;
    return envelopeBody({ id: c.event_id, type: c.event_type, createdAt: c.ev_created_at, occurredAt: c.ev_occurred_at, propertyCode: c.property_code, data: c.ev_data });
  }

  function secretsOf(c: Claimed, now: Date): string[] {
    const secrets = [d.box.open(c.secret_sealed, c.endpoint_id)];
    if (c.previous_secret_sealed !== null && c.previous_secret_expires_at !== null && c.previous_secret_expires_at > now) {
      secrets.push(d.box.open(c.previous_secret_sealed, c.endpoint_id));
    }
    return secrets;
  }

  /** One attempt of one delivery, if it is due; undefined when there was nothing to do. */
  async function attempt(deliveryId: string): Promise<AttemptOutcome | undefined> {
    const now = d.clock.now();
    const c = await claim(deliveryId, now);
    if (c === undefined) return undefined;
    if (c.lapsed_lease !== null) {
      // The previous holder died mid-attempt: the receiver may or may not have seen that attempt.
      await recordInterrupted(c);
    }
    const result = await perform(c, now);
    return record(c, now, result);
  }

  async function perform(c: Claimed, now: Date): Promise<SendResult> {
    const body = bodyOf(c);
    if (body === undefined) return { httpStatus: null, durationMs: 0, errorClass: "connection", errorMessage: "the event no longer exists" };
    if (body.length > maxBodyBytes) {
      return { httpStatus: null, durationMs: 0, errorClass: "payload_too_large", errorMessage: `the event body is ${body.length} bytes; the limit is ${maxBodyBytes}` };
    }
    const started = performance.now();
    let target;
    try {
      // The address rules hold at every delivery, not only at creation (DNS answers change).
      target = await verifyTarget(c.url, d.policy, d.resolver);
    } catch (err) {
      if (!(err instanceof AddressRejected)) throw err;
      return { httpStatus: null, durationMs: Math.round(performance.now() - started), errorClass: "address_rejected", errorMessage: err.message };
    }
    const headers = deliveryHeaders({
      body,
      secrets: secretsOf(c, now),
      unixSeconds: Math.floor(now.getTime() / 1000),
      eventId: c.event_id,
      eventType: c.is_test ? testEventType : c.event_type,
      deliveryId: c.id,
      attempt: c.attempts,
    });
    const spent = performance.now() - started;
    const result = await d.sender.send({ target, headers, body, timeoutMs: Math.max(1, Math.round(d.timeoutMs - spent)) });
    return { ...result, durationMs: result.durationMs + Math.round(spent) };
  }

  async function recordInterrupted(c: Claimed): Promise<void> {
    await d.pool.query(
      `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
       values ($1, $2, $3, $4, $5, $6, $7, null, 0, 'interrupted', 'the worker stopped during the attempt; retried', $8, $8) on conflict (delivery_id, attempt) do nothing`,
      [newId(), c.property_id, c.endpoint_id, c.id, c.event_id, c.is_test ? testEventType : c.event_type, c.attempts - 1, c.lapsed_lease],
    );
  }

  async function record(c: Claimed, startedAt: Date, r: SendResult): Promise<AttemptOutcome> {
    const now = d.clock.now();
    const ok = r.errorClass === null;
    if (ok && !c.is_test) return recordSuccess(c, startedAt, now, r);
    const permanent = r.errorClass === "payload_too_large" || c.is_test;
    const next = ok || permanent ? undefined : nextAttemptAt({ attemptsMade: c.attempts, firstAttemptAt: c.first_attempt_at, now, random: d.random });
    const status = ok ? "succeeded" : next === undefined ? "failed" : "pending";
    const finalStatus = await d.transact(async (tx) => {
      // Real-time id: history is ordered by (started_at, id) and the test clock may stand still.
      await tx.query(
        `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [newId(), c.property_id, c.endpoint_id, c.id, c.event_id, c.is_test ? testEventType : c.event_type, c.attempts, r.httpStatus, r.durationMs, r.errorClass, r.errorMessage, startedAt, now],
      );
      // The address row first (it serializes concurrent attempts of one address), then the delivery.
      const open = c.is_test ? true : await updateHealth(tx, c, ok, startedAt, now);
      const settled = status === "pending" && !open ? "cancelled" : status;
      // Only the holder of this attempt may settle it (a lease taken over after a crash moves `attempts` on).
      await tx.query(
        `update webhook_deliveries set status = $2, next_attempt_at = $3, lease_until = null, last_http_status = $4, last_error_class = $5
         where id = $1 and attempts = $6 and status = 'pending'`,
        [c.id, settled, settled === "pending" ? next : null, r.httpStatus, r.errorClass, c.attempts],
      );
      if (settled === "pending" && next !== undefined) {
        await tx.enqueue(queues.webhooksDeliver, { deliveryId: c.id }, { startAfter: Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000)) });
      }
      return settled;
    });
    return { ...r, deliveryId: c.id, attempt: c.attempts, status: finalStatus, nextAttemptAt: finalStatus === "pending" ? next : undefined };
  }

  /**
   * The hot path in one statement: the attempt row, the delivery settled, and the address's failure count
   * reset (written only when there is something to reset or last_success_at is a minute old, so concurrent
   * deliveries to one address do not queue on its row).
   */
  async function recordSuccess(c: Claimed, startedAt: Date, now: Date, r: SendResult): Promise<AttemptOutcome> {
    await d.pool.query(
      `with a as (
         insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, null, null, $10, $11)
       ), e as (
         update webhook_endpoints set last_success_at = $11, failing_since = null, failures_since_success = 0
         where id = $3 and (failing_since is not null or failures_since_success <> 0 or last_success_at is null or last_success_at < $11::timestamptz - interval '1 minute')
       )
       update webhook_deliveries set status = 'succeeded', next_attempt_at = null, lease_until = null, last_http_status = $8, last_error_class = null
       where id = $4 and attempts = $7 and status = 'pending'`,
      [newId(), c.property_id, c.endpoint_id, c.id, c.event_id, c.event_type, c.attempts, r.httpStatus, r.durationMs, startedAt, now],
    );
    return { ...r, deliveryId: c.id, attempt: c.attempts, status: "succeeded", nextAttemptAt: undefined };
  }

  /** Success resets the address's failure count; a failure may close it (24 h, >= 5 failures). Returns whether it is open. */
  async function updateHealth(tx: Tx, c: Claimed, ok: boolean, startedAt: Date, now: Date): Promise<boolean> {
    if (ok) {
      const [row] = await tx.query<{ status: string }>(
        "update webhook_endpoints set last_success_at = $2, failing_since = null, failures_since_success = 0 where id = $1 returning status",
        [c.endpoint_id, now],
      );
      return row?.status === "open";
    }
    const [health] = await tx.query<{ failing_since: Date | string; failures_since_success: number; status: string }>(
      `update webhook_endpoints set failing_since = coalesce(failing_since, $2), failures_since_success = failures_since_success + 1
       where id = $1 returning failing_since, failures_since_success, status`,
      [c.endpoint_id, startedAt],
    );
    if (health === undefined || health.status !== "open") return false;
    if (health.failures_since_success < closeAfterFailures || now.getTime() - asDate(health.failing_since).getTime() < closeAfterMs) return true;
    const reason = `No successful response for 24 hours (${health.failures_since_success} failed attempts).`;
    const [closed] = await tx.query<{ created_by: string | null; url: string }>(
      "update webhook_endpoints set status = 'closed', closed_at = $2, closed_reason = $3, updated_at = $2 where id = $1 and status = 'open' returning created_by, url",
      [c.endpoint_id, now, reason],
    );
    await tx.query("update webhook_deliveries set status = 'cancelled', next_attempt_at = null, last_error_class = 'endpoint_closed' where endpoint_id = $1 and status = 'pending' and id <> $2", [
      c.endpoint_id,
      c.id,
    ]);
    if (closed?.created_by != null) {
      const body = `${closed.url}: ${reason} Re-enable it in Integrations > API access > Webhook addresses.`;
      await insertNotification(tx, { propertyId: c.property_id, userId: closed.created_by, kind: "webhook.endpoint_closed", title: "Webhook address closed", body, data: { endpointId: c.endpoint_id } }, now);
      await tx.enqueue(queues.webhooksEndpointClosed, { endpointId: c.endpoint_id });
    }
    d.logger.warn({ endpointId: c.endpoint_id, propertyId: c.property_id }, "webhook address closed automatically");
    return false;
  }

  /** Deliveries that are due now (and not held by a live worker), oldest first. */
  async function dueDeliveryIds(limit = 1000): Promise<string[]> {
    const { rows } = await d.pool.query<{ id: string }>(
      "select id from webhook_deliveries where status = 'pending' and next_attempt_at <= $1 and (lease_until is null or lease_until <= $1) order by next_attempt_at limit $2",
      [d.clock.now(), limit],
    );
    return rows.map((r) => r.id);
  }

  return {
    fanOut,
    /** Fan-out, then attempt 1 of every new delivery at once (what the events.fanout worker runs). */
    async fanOutAndSend(eventId: string): Promise<void> {
      const ids = await fanOut(eventId);
      await Promise.all(ids.map((id) => attempt(id)));
    },
    attempt,
    dueDeliveryIds,
    /** Queues an attempt job for every due delivery (the every-minute sweeper; also takes over crashed workers' claims). */
    async sweepDue(): Promise<number> {
      const ids = await dueDeliveryIds();
      if (ids.length > 0) await d.transact(async (tx) => void (await Promise.all(ids.map((id) => tx.enqueue(queues.webhooksDeliver, { deliveryId: id })))));
      return ids.length;
    },
    /** Runs every due attempt right here (tests move the clock, then call this instead of waiting for jobs). */
    async runDue(): Promise<AttemptOutcome[]> {
      const out: AttemptOutcome[] = [];
      for (const id of await dueDeliveryIds()) {
        const o = await attempt(id);
        if (o !== undefined) out.push(o);
      }
      return out;
    },
    /** Deletes history older than 30 days (attempt rows and finished deliveries). */
    async purge(): Promise<{ attempts: number; deliveries: number }> {
      const cutoff = new Date(d.clock.now().getTime() - 30 * 24 * 60 * 60 * 1000);
      const a = await d.pool.query("delete from webhook_attempts where started_at < $1", [cutoff]);
      const dl = await d.pool.query("delete from webhook_deliveries where status <> 'pending' and coalesce(last_attempt_at, created_at) < $1", [cutoff]);
      return { attempts: a.rowCount ?? 0, deliveries: dl.rowCount ?? 0 };
    },
  };
}
