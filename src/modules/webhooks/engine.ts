import type pg from "pg";
import type { Transact, Tx } from "../../db/transaction.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Logger } from "../../lib/logger.ts";
import { insertNotification } from "../notifications/index.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver, type VerifiedTarget } from "./address.ts";
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

/** The columns a claim returns: the delivery after its claim, its address, property code and event. */
const claimedColumns = `c.id, c.property_id, c.endpoint_id, c.event_id, c.event_type, c.is_test, c.attempts, c.first_attempt_at, c.lapsed_lease, c.created_at,
  ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at, p.code as property_code,
  e.created_at as ev_created_at, e.occurred_at as ev_occurred_at, e.data as ev_data`;
const claimedJoins = `join webhook_endpoints ep on ep.id = c.endpoint_id join properties p on p.id = c.property_id
  left join events e on e.id = c.event_id and e.property_id = c.property_id`;

/** What attempts of one batch share: one body per event, one key set per address, one address check per URL. */
interface BatchMemo {
  bodies: Map<string, Buffer | undefined>;
  secrets: Map<string, string[]>;
  targets: Map<string, Promise<VerifiedTarget>>;
}

interface Finished {
  c: Claimed;
  result: SendResult;
  finishedAt: Date;
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
    const { rows: pairs } = await d.pool.query<{ event_id: string; property_id: string; type: string; endpoint_id: string }>(
      `select e.id as event_id, e.property_id, e.type, ep.id as endpoint_id from events e
       join webhook_endpoints ep on ep.property_id = e.property_id and ep.status = 'open' and e.type = any(ep.event_types)
       cross join platform_settings ps
       where e.id = any($1::uuid[]) and ps.id = 1 and ps.partner_api_enabled`,
      [eventIds],
    );
    // While the partner API is off platform-wide nothing is sent, and nothing piles up to be sent later.
    if (pairs.length === 0) return [];
    const now = d.clock.now();
    // The address and the platform switch are checked again by the insert, which is the claim.
    const { rows } = await d.pool.query<Claimed>(
      `with c as (
         insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at, next_attempt_at, lease_until, created_at)
         select u.id, u.property_id, u.endpoint_id, u.event_id, u.event_type, 'pending', 1, $1, $1, $1, $2, $1
         from unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[]) as u(id, property_id, endpoint_id, event_id, event_type)
         join webhook_endpoints ep on ep.id = u.endpoint_id and ep.status = 'open' cross join platform_settings ps
         where ps.id = 1 and ps.partner_api_enabled
         on conflict (endpoint_id, event_id) where resend_of is null and not is_test do nothing
         returning *, null::timestamptz as lapsed_lease
       )
       select ${claimedColumns} from c ${claimedJoins}`,
      [
        now,
        new Date(now.getTime() + d.leaseMs),
        pairs.map(() => newId(now.getTime())),
        pairs.map((r) => r.property_id),
        pairs.map((r) => r.endpoint_id),
        pairs.map((r) => r.event_id),
        pairs.map((r) => r.type),
      ],
    );
    return run(rows, now);
  }

  /** Takes the attempts that are due and held by nobody; cancels those whose address or the platform switch is off. */
  async function claim(deliveryIds: readonly string[], now: Date): Promise<Claimed[]> {
    const { rows } = await d.pool.query<Claimed>(
      `with prev as (
         select dl.id, dl.lease_until from webhook_deliveries dl
         join webhook_endpoints ep on ep.id = dl.endpoint_id and ep.property_id = dl.property_id
         cross join platform_settings ps
         where dl.id = any($1::uuid[]) and dl.status = 'pending' and dl.next_attempt_at <= $2 and (dl.lease_until is null or dl.lease_until <= $2)
           and (ep.status = 'open' or dl.is_test) and ps.id = 1 and ps.partner_api_enabled
         for update of dl skip locked
       ), c as (
         update webhook_deliveries dl set attempts = dl.attempts + 1, lease_until = $3, first_attempt_at = coalesce(dl.first_attempt_at, $2), last_attempt_at = $2
         from prev where dl.id = prev.id
         returning dl.*, prev.lease_until as lapsed_lease
       )
       select ${claimedColumns} from c ${claimedJoins}`,
      [deliveryIds, now, new Date(now.getTime() + d.leaseMs)],
    );
    if (rows.length === deliveryIds.length) return rows;
    // Not claimable: stop for good those whose address is no longer open or while webhooks are off platform-wide.
    const claimed = new Set(rows.map((r) => r.id));
    await d.pool.query(
      `update webhook_deliveries dl set status = 'cancelled', next_attempt_at = null, lease_until = null,
         last_error_class = case when not ps.partner_api_enabled then 'partner_api_disabled' else 'endpoint_closed' end
       from webhook_endpoints ep, platform_settings ps
       where dl.id = any($1::uuid[]) and dl.status = 'pending' and ep.id = dl.endpoint_id and ps.id = 1
         and (not ps.partner_api_enabled or (ep.status <> 'open' and not dl.is_test))
         and (dl.lease_until is null or dl.lease_until <= $2)`,
      [deliveryIds.filter((id) => !claimed.has(id)), now],
    );
    return rows;
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

  /** Makes the claimed attempts concurrently and records them; outcomes in the order of `claimed`. */
  async function run(claimed: Claimed[], now: Date): Promise<AttemptOutcome[]> {
    if (claimed.length === 0) return [];
    // A lapsed lease means the previous holder died mid-attempt: the receiver may or may not have seen it.
    const interrupted = claimed.filter((c) => c.lapsed_lease !== null);
    if (interrupted.length > 0) await recordInterrupted(interrupted);
    // Rows of one claim statement: one snapshot, so one body per event and one key set per address.
    const memo: BatchMemo = { bodies: new Map(), secrets: new Map(), targets: new Map() };
    const finished = await Promise.all(
      claimed.map(async (c): Promise<Finished> => {
        const result = await perform(c, now, memo);
        return { c, result, finishedAt: d.clock.now() };
      }),
    );
    const successes = finished.filter((f) => f.result.errorClass === null && !f.c.is_test);
    if (successes.length > 0) await recordSuccesses(successes, now);
    return Promise.all(
      finished.map((f) => (f.result.errorClass === null && !f.c.is_test ? outcome(f, "succeeded", undefined) : recordOne(f, now))),
    );
  }

  function outcome(f: Finished, status: AttemptOutcome["status"], next: Date | undefined): AttemptOutcome {
    return { ...f.result, deliveryId: f.c.id, attempt: f.c.attempts, status, nextAttemptAt: status === "pending" ? next : undefined };
  }

  async function perform(c: Claimed, now: Date, memo: BatchMemo): Promise<SendResult> {
    const bodyKey = c.is_test ? c.id : c.event_id;
    if (!memo.bodies.has(bodyKey)) memo.bodies.set(bodyKey, bodyOf(c));
    const body = memo.bodies.get(bodyKey);
    if (body === undefined) return { httpStatus: null, durationMs: 0, errorClass: "connection", errorMessage: "the event no longer exists" };
    if (body.length > maxBodyBytes) {
      return { httpStatus: null, durationMs: 0, errorClass: "payload_too_large", errorMessage: `the event body is ${body.length} bytes; the limit is ${maxBodyBytes}` };
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
      return { httpStatus: null, durationMs: Math.round(performance.now() - started), errorClass: "address_rejected", errorMessage: err.message };
    }
    let secrets = memo.secrets.get(c.endpoint_id);
    if (secrets === undefined) memo.secrets.set(c.endpoint_id, (secrets = secretsOf(c, now)));
    const headers = deliveryHeaders({
      body,
      secrets,
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

  async function recordInterrupted(claimed: Claimed[]): Promise<void> {
    await d.pool.query(
      `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
       select u.id, u.property_id, u.endpoint_id, u.delivery_id, u.event_id, u.event_type, u.attempt, null, 0, 'interrupted', 'the worker stopped during the attempt; retried', u.at, u.at
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::int[], $8::timestamptz[])
         as u(id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, at)
       on conflict (delivery_id, attempt) do nothing`,
      [
        claimed.map(() => newId()),
        claimed.map((c) => c.property_id),
        claimed.map((c) => c.endpoint_id),
        claimed.map((c) => c.id),
        claimed.map((c) => c.event_id),
        claimed.map((c) => (c.is_test ? testEventType : c.event_type)),
        claimed.map((c) => c.attempts - 1),
        claimed.map((c) => c.lapsed_lease!.toISOString()),
      ],
    );
  }

  /** A failed attempt or a test delivery: the attempt row, the address's health, the delivery settled, the retry queued. */
  async function recordOne(f: Finished, startedAt: Date): Promise<AttemptOutcome> {
    const { c, result: r, finishedAt: now } = f;
    // Only a test delivery gets here with a success; it leaves the address's health alone.
    const ok = r.errorClass === null;
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
      const open = c.is_test ? true : await updateHealth(tx, c, startedAt, now);
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
    return outcome(f, finalStatus, next);
  }

  /**
   * Successes of a batch in one statement: the attempt rows, the deliveries settled, and the addresses'
   * failure counts reset (written only when there is something to reset or last_success_at is a minute
   * old, so concurrent batches do not queue on address rows). Address rows are locked first and in id
   * order, as the failure path locks the address before its deliveries: no deadlock between the two.
   */
  async function recordSuccesses(done: Finished[], startedAt: Date): Promise<void> {
    const last = new Date(Math.max(...done.map((f) => f.finishedAt.getTime())));
    await d.pool.query(
      `with e as (
         update webhook_endpoints set last_success_at = $1, failing_since = null, failures_since_success = 0
         where id in (
           select id from webhook_endpoints
           where id = any($2::uuid[]) and (failing_since is not null or failures_since_success <> 0 or last_success_at is null or last_success_at < $1::timestamptz - interval '1 minute')
           order by id for update)
         returning id
       ), a as (
         insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, error_class, error_message, started_at, finished_at)
         select u.id, u.property_id, u.endpoint_id, u.delivery_id, u.event_id, u.event_type, u.attempt, u.http_status, u.duration_ms, null, null, $3, u.finished_at
         from unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::uuid[], $9::text[], $10::int[], $11::int[], $12::int[], $13::timestamptz[])
           as u(id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, finished_at)
       )
       update webhook_deliveries dl set status = 'succeeded', next_attempt_at = null, lease_until = null, last_http_status = u.http_status, last_error_class = null
       from unnest($7::uuid[], $10::int[], $11::int[]) as u(delivery_id, attempt, http_status)
       where dl.id = u.delivery_id and dl.attempts = u.attempt and dl.status = 'pending' and (select count(*) from e) >= 0`,
      [
        last,
        [...new Set(done.map((f) => f.c.endpoint_id))],
        startedAt,
        done.map(() => newId()),
        done.map((f) => f.c.property_id),
        done.map((f) => f.c.endpoint_id),
        done.map((f) => f.c.id),
        done.map((f) => f.c.event_id),
        done.map((f) => f.c.event_type),
        done.map((f) => f.c.attempts),
        done.map((f) => f.result.httpStatus),
        done.map((f) => f.result.durationMs),
        done.map((f) => f.finishedAt.toISOString()),
      ],
    );
  }

  /** A failure may close the address (24 h without success, >= 5 failures). Returns whether it is still open. */
  async function updateHealth(tx: Tx, c: Claimed, startedAt: Date, now: Date): Promise<boolean> {
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

  /** One attempt of each given delivery that is due and held by nobody (what a webhooks.deliver batch runs). */
  async function attempt(deliveryIds: readonly string[]): Promise<AttemptOutcome[]> {
    if (deliveryIds.length === 0) return [];
    const now = d.clock.now();
    return run(await claim(deliveryIds, now), now);
  }

  return {
    /** What an events.fanout batch runs: the deliveries of each event, attempt 1 of each at once. */
    fanOut,
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
      return attempt(await dueDeliveryIds());
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
