import type pg from "pg";
import { recordChange } from "../audit/index.ts";
import { poolQueryable } from "../../db/queryable.ts";
import type { Transact } from "../../db/transaction.ts";
import { AppError, invalidField } from "../../errors.ts";
import { queues } from "../../jobs/queues.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import { AddressRejected, verifyTarget, type AddressPolicy, type Resolver } from "./address.ts";
import type { WebhookEngine } from "./engine.ts";
import { createEndpointsRepository, toEndpoint, type Endpoint, type HistoryEntry } from "./endpoints.repository.ts";
import {
  cancelPendingDeliveries,
  copyDelivery,
  countEndpoints,
  deleteEndpoint,
  disableEndpoint,
  endpointChanges,
  insertEndpoint,
  insertTestDelivery,
  lockEndpointCreation,
  updateEndpoint,
} from "./endpoint-writes.repository.ts";
import { isSubscribable, subscribableEventTypes, testEventType } from "./event-types.ts";
import { ed25519Aad } from "./engine.ts";
import { newSigningSecret, type SecretBox } from "./secrets.ts";
import type { Recoveries, Recovery } from "./recovery.ts";
import { newEd25519Pair } from "./standard-signature.ts";
import { getPlatformSettings } from "../platform/index.ts";

export const maxEndpointsPerProperty = 10;
export const defaultMaxPerSecond = 50;
export const defaultMaxConcurrency = 10;
const secretOverlapMs = 24 * 60 * 60 * 1000;
const historyDays = 30;
const maxDescription = 500;
const deliveryStatuses = ["pending", "succeeded", "failed", "cancelled"];

/** Who acts: the staff user and the session's active property. */
export interface StaffActor {
  propertyId: string;
  userId: string;
}

/** How an address is paced and signed (absent: defaults at creation, unchanged on update). */
interface EndpointDelivery {
  /** true: deliveries also carry an ed25519 `v1a` signature; the address shows its `whpk_` public key. */
  ed25519?: boolean;
  /** Deliveries started per second, 1-1000 (default 50). */
  maxPerSecond?: number;
  /** Requests in flight at once, 1-64 (default 10). */
  maxConcurrency?: number;
}

export interface EndpointInput extends EndpointDelivery {
  url: string;
  eventTypes: readonly string[];
  description?: string;
}

export interface EndpointPatch extends EndpointDelivery {
  url?: string;
  /** Empty or absent: unchanged (an address always has at least one type). */
  eventTypes?: readonly string[];
  description?: string;
}

export interface TestResult {
  deliveryId: string;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
}

export interface WebhooksServiceDeps {
  pool: pg.Pool;
  transact: Transact;
  clock: Clock;
  box: SecretBox;
  resolver: Resolver;
  policy: AddressPolicy;
  engine: WebhookEngine;
  recoveries: Recoveries;
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** The panel's webhook addresses of one property (Integrations > API access > Webhook addresses). */
export function createWebhooksService(d: WebhooksServiceDeps) {
  const repo = createEndpointsRepository(d.pool);

  async function checkUrl(url: string): Promise<string> {
    try {
      await verifyTarget(url, d.policy, d.resolver);
    } catch (err) {
      if (err instanceof AddressRejected) throw invalidField("url", err.message, "validation_failed");
      throw err;
    }
    return new URL(url).toString();
  }

  function checkTypes(types: readonly string[]): string[] {
    const wanted = [...new Set(types.filter((t) => t !== testEventType))];
    if (wanted.length === 0)
      throw invalidField(
        "eventTypes",
        `choose at least one of ${subscribableEventTypes.join(", ")}`,
        "validation_failed",
      );
    for (const t of wanted)
      if (!isSubscribable(t)) throw invalidField("eventTypes", `unknown event type "${t}"`, "validation_failed");
    return wanted;
  }

  function checkDescription(text: string | undefined): string {
    const value = (text ?? "").trim();
    if (value.length > maxDescription)
      throw invalidField("description", `at most ${maxDescription} characters`, "validation_failed");
    return value;
  }

  function checkLimit(
    field: "maxPerSecond" | "maxConcurrency",
    value: number | undefined,
    max: number,
    current: number,
  ): number {
    if (value === undefined) return current;
    if (!Number.isInteger(value) || value < 1 || value > max)
      throw invalidField(field, `an integer from 1 to ${max}`, "validation_failed");
    return value;
  }

  async function mustGet(actor: StaffActor, id: string): Promise<Endpoint> {
    const found = isUuid(id) ? await repo.get(actor.propertyId, id) : undefined;
    if (found === undefined) throw new AppError("not_found", "Webhook address not found.");
    return found;
  }

  /** Updates one address of the actor's property and returns it; not found when it is another property's. */
  async function update(
    actor: StaffActor,
    id: string,
    change: keyof typeof endpointChanges,
    params: unknown[],
    audit: { action: string; before?: Endpoint },
  ): Promise<Endpoint> {
    if (!isUuid(id)) throw new AppError("not_found", "Webhook address not found.");
    return d.transact(async (tx) => {
      const row = await updateEndpoint(tx, actor.propertyId, id, change, params);
      if (row === undefined) throw new AppError("not_found", "Webhook address not found.");
      const after = toEndpoint(row);
      recordChange(tx, {
        propertyId: actor.propertyId,
        entity: "webhook_endpoint",
        entityId: id,
        action: audit.action,
        before: audit.before,
        after,
      });
      return after;
    });
  }

  return {
    list: (actor: StaffActor) => repo.list(actor.propertyId),
    get: mustGet,

    /** Creates an address; the secret is returned here only (stored sealed). At most 10 per property. */
    async create(actor: StaffActor, input: EndpointInput): Promise<{ endpoint: Endpoint; secret: string }> {
      const eventTypes = checkTypes(input.eventTypes);
      const description = checkDescription(input.description);
      const maxPerSecond = checkLimit("maxPerSecond", input.maxPerSecond, 1000, defaultMaxPerSecond);
      const maxConcurrency = checkLimit("maxConcurrency", input.maxConcurrency, 64, defaultMaxConcurrency);
      const url = await checkUrl(input.url);
      const secret = newSigningSecret();
      const now = d.clock.now();
      const id = newId(now.getTime());
      const pair = input.ed25519 === true ? newEd25519Pair() : undefined;
      const row = await d.transact(async (tx) => {
        // Serializes creates of one property so two concurrent requests cannot make an eleventh address.
        await lockEndpointCreation(tx, actor.propertyId);
        if ((await countEndpoints(tx, actor.propertyId)) >= maxEndpointsPerProperty)
          throw new AppError("conflict", `A property can have at most ${maxEndpointsPerProperty} webhook addresses.`);
        const inserted = await insertEndpoint(tx, {
          id,
          propertyId: actor.propertyId,
          url,
          description,
          eventTypes,
          secretSealed: d.box.seal(secret, id),
          createdBy: actor.userId,
          now,
          ed25519KeySealed: pair === undefined ? null : d.box.seal(pair.secretKey, ed25519Aad(id)),
          ed25519PublicKey: pair?.publicKey ?? null,
          maxPerSecond,
          maxConcurrency,
        });
        recordChange(tx, {
          propertyId: actor.propertyId,
          entity: "webhook_endpoint",
          entityId: id,
          action: "create",
          after: toEndpoint(inserted),
        });
        return inserted;
      });
      return { endpoint: toEndpoint(row), secret };
    },

    /** Changes url (checked again), event types and description. */
    async patch(actor: StaffActor, id: string, patch: EndpointPatch): Promise<Endpoint> {
      const current = await mustGet(actor, id);
      const url = patch.url === undefined ? current.url : await checkUrl(patch.url);
      const eventTypes =
        patch.eventTypes === undefined || patch.eventTypes.length === 0
          ? current.eventTypes
          : checkTypes(patch.eventTypes);
      const description = patch.description === undefined ? current.description : checkDescription(patch.description);
      const maxPerSecond = checkLimit("maxPerSecond", patch.maxPerSecond, 1000, current.maxPerSecond);
      const maxConcurrency = checkLimit("maxConcurrency", patch.maxConcurrency, 64, current.maxConcurrency);
      const updated = await update(
        actor,
        id,
        "settings",
        [url, eventTypes, description, d.clock.now(), maxPerSecond, maxConcurrency],
        { action: "modify", before: current },
      );
      if (patch.ed25519 === undefined || patch.ed25519 === (current.publicKey !== null)) return updated;
      // Switching ed25519 on makes a key pair; switching it off drops the keys (HMAC signatures go on).
      const pair = patch.ed25519 ? newEd25519Pair() : undefined;
      return update(
        actor,
        id,
        "ed25519",
        [pair === undefined ? null : d.box.seal(pair.secretKey, ed25519Aad(id)), pair?.publicKey ?? null],
        { action: "modify", before: updated },
      );
    },

    /** Deletes the address with its deliveries and history. */
    async remove(actor: StaffActor, id: string): Promise<void> {
      if (!isUuid(id)) throw new AppError("not_found", "Webhook address not found.");
      await d.transact(async (tx) => {
        const gone = await deleteEndpoint(tx, actor.propertyId, id);
        if (gone === undefined) throw new AppError("not_found", "Webhook address not found.");
        recordChange(tx, {
          propertyId: actor.propertyId,
          entity: "webhook_endpoint",
          entityId: id,
          action: "delete",
          before: toEndpoint(gone),
        });
      });
    },

    /**
     * New secret (returned once) and, for an ed25519 address, a new key pair; for 24 hours the old secret and
     * key keep signing a second value in every signature header.
     */
    async rotateSecret(actor: StaffActor, id: string): Promise<{ endpoint: Endpoint; secret: string }> {
      const current = await mustGet(actor, id);
      const secret = newSigningSecret();
      const pair = current.publicKey === null ? undefined : newEd25519Pair();
      const now = d.clock.now();
      const endpoint = await update(
        actor,
        id,
        "rotateSecret",
        [
          d.box.seal(secret, id),
          new Date(now.getTime() + secretOverlapMs),
          now,
          pair === undefined ? null : d.box.seal(pair.secretKey, ed25519Aad(id)),
          pair?.publicKey ?? null,
        ],
        { action: "rotate_secret" },
      );
      return { endpoint, secret };
    },

    /** Stops the address; its pending deliveries stop too (nothing accumulates while it is off). */
    async disable(actor: StaffActor, id: string): Promise<Endpoint> {
      return d.transact(async (tx) => {
        const row = await disableEndpoint(tx, actor.propertyId, isUuid(id) ? id : null, d.clock.now());
        if (row === undefined) throw new AppError("not_found", "Webhook address not found.");
        recordChange(tx, {
          propertyId: actor.propertyId,
          entity: "webhook_endpoint",
          entityId: row.id,
          action: "disable",
          after: toEndpoint(row),
        });
        await cancelPendingDeliveries(tx, id);
        return toEndpoint(row);
      });
    },

    /** Re-opens a closed or disabled address with a clean failure count. */
    async enable(actor: StaffActor, id: string): Promise<Endpoint> {
      return update(actor, id, "enable", [d.clock.now()], { action: "enable" });
    },

    /** Sends webhook.test at once (signed like any event) and answers with the outcome of that one attempt. */
    async sendTest(actor: StaffActor, id: string): Promise<TestResult> {
      await mustGet(actor, id);
      if (!(await getPlatformSettings(poolQueryable(d.pool))).partnerApiEnabled)
        throw new AppError("conflict", "Webhooks are switched off platform-wide while the partner API is disabled.");
      const now = d.clock.now();
      const deliveryId = newId(now.getTime());
      await insertTestDelivery(d.pool, {
        id: deliveryId,
        propertyId: actor.propertyId,
        endpointId: id,
        eventId: newId(now.getTime()),
        eventType: testEventType,
        now,
      });
      const [outcome] = await d.engine.attempt([deliveryId]);
      if (outcome === undefined) throw new AppError("conflict", "The test event could not be sent.");
      return {
        deliveryId,
        httpStatus: outcome.httpStatus,
        durationMs: outcome.durationMs,
        error: outcome.errorMessage,
      };
    },

    /**
     * Re-sends to an OPEN address every event whose delivery failed or was stopped by closing since `since`
     * (at most 30 days back), in the background and paced by the address's limits. A recovery already running
     * for the address is answered instead of starting a second one.
     */
    async recover(actor: StaffActor, id: string, since: Date | undefined): Promise<Recovery> {
      const endpoint = await mustGet(actor, id);
      if (endpoint.status !== "open")
        throw new AppError("conflict", "The webhook address is not open; enable it first.");
      return d.recoveries.start({ propertyId: actor.propertyId, endpointId: id, userId: actor.userId, since });
    },

    /** Attempts of the last 30 days, newest first; `cursor` is the opaque value of the previous page. The address's recent recoveries come with it. */
    async history(
      actor: StaffActor,
      id: string,
      page: { cursor?: string; limit?: number; deliveryStatus?: string; eventType?: string },
    ): Promise<{ deliveries: HistoryEntry[]; nextCursor: string | null; recoveries: Recovery[] }> {
      const deliveryStatus = page.deliveryStatus ? page.deliveryStatus.toLowerCase() : undefined;
      if (deliveryStatus !== undefined && !deliveryStatuses.includes(deliveryStatus)) {
        throw invalidField("deliveryStatus", `one of ${deliveryStatuses.map((s) => s.toUpperCase()).join(", ")}`);
      }
      const eventType = page.eventType || undefined;
      if (eventType !== undefined && eventType !== testEventType && !isSubscribable(eventType))
        throw invalidField("eventType", `unknown event type "${eventType}"`);
      await mustGet(actor, id);
      const recoveries = await d.recoveries.recent(actor.propertyId, id);
      const limit = Math.min(Math.max(page.limit ?? 50, 1), 200);
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      const since = new Date(d.clock.now().getTime() - historyDays * 24 * 60 * 60 * 1000);
      const rows = await repo.history(actor.propertyId, id, since, limit + 1, after, { deliveryStatus, eventType });
      const more = rows.length > limit;
      const deliveries = rows.slice(0, limit);
      const last = deliveries.at(-1);
      return {
        deliveries,
        recoveries,
        nextCursor:
          more && last ? Buffer.from(`${last.startedAt.toISOString()}|${last.id}`).toString("base64url") : null,
      };
    },

    /** Sends the same event (same id) again at once, as a new delivery with a fresh delivery id. */
    async resend(actor: StaffActor, endpointId: string, deliveryId: string): Promise<{ deliveryId: string }> {
      const endpoint = await mustGet(actor, endpointId);
      if (endpoint.status !== "open")
        throw new AppError("conflict", "The webhook address is not open; enable it first.");
      const now = d.clock.now();
      const id = newId(now.getTime());
      return d.transact(async (tx) => {
        const created = await copyDelivery(tx, {
          id,
          propertyId: actor.propertyId,
          endpointId,
          deliveryId: isUuid(deliveryId) ? deliveryId : null,
          now,
        });
        if (!created) throw new AppError("not_found", "Delivery not found.");
        await tx.enqueue(queues.webhooksDeliver, { deliveryId: id });
        return { deliveryId: id };
      });
    },
  };
}

function decodeCursor(cursor: string): { startedAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const startedAt = new Date(at ?? "");
  if (id === undefined || !isUuid(id) || Number.isNaN(startedAt.getTime()))
    throw invalidField("cursor", "not a cursor of this list");
  return { startedAt, id };
}
