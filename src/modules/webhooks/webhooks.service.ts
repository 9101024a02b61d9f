import type pg from "pg";
import { recordChange } from "../audit/index.ts";
import type { Transact } from "../../db/transaction.ts";
import { AppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import { isUuid, newId } from "../../lib/ids.ts";
import type { AddressPolicy, Resolver } from "./address.ts";
import type { WebhookEngine } from "./engine.ts";
import { createEndpointDeliveries } from "./endpoint-deliveries.ts";
import {
  checkDescription,
  checkLimit,
  checkTypes,
  checkUrl,
  defaultMaxConcurrency,
  defaultMaxPerSecond,
  type EndpointInput,
  type EndpointPatch,
  type StaffActor,
} from "./endpoint-input.ts";
import {
  cancelPendingDeliveries,
  countEndpoints,
  deleteEndpoint,
  disableEndpoint,
  endpointChanges,
  insertEndpoint,
  lockEndpointCreation,
  updateEndpoint,
} from "./endpoint-writes.repository.ts";
import { createEndpointsRepository, toEndpoint, type Endpoint } from "./endpoints.repository.ts";
import type { Recoveries } from "./recovery.ts";
import { ed25519Aad, newSigningSecret, type SecretBox } from "./secrets.ts";
import { newEd25519Pair } from "./standard-signature.ts";

export const maxEndpointsPerProperty = 10;
const secretOverlapMs = 24 * 60 * 60 * 1000;

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
    }, actor.keyed);
  }

  const deliveries = createEndpointDeliveries(d, mustGet);

  return {
    list: (actor: StaffActor) => repo.list(actor.propertyId),
    get: mustGet,

    /** Creates an address; the secret is returned here only (stored sealed). At most 10 per property. */
    async create(actor: StaffActor, input: EndpointInput): Promise<{ endpoint: Endpoint; secret: string }> {
      const eventTypes = checkTypes(input.eventTypes);
      const description = checkDescription(input.description);
      const maxPerSecond = checkLimit("maxPerSecond", input.maxPerSecond, 1000, defaultMaxPerSecond);
      const maxConcurrency = checkLimit("maxConcurrency", input.maxConcurrency, 64, defaultMaxConcurrency);
      const url = await checkUrl(input.url, d.policy, d.resolver);
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
      }, actor.keyed);
      return { endpoint: toEndpoint(row), secret };
    },

    /** Changes url (checked again), event types and description. */
    async patch(actor: StaffActor, id: string, patch: EndpointPatch): Promise<Endpoint> {
      const current = await mustGet(actor, id);
      const url = patch.url === undefined ? current.url : await checkUrl(patch.url, d.policy, d.resolver);
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
      }, actor.keyed);
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
      }, actor.keyed);
    },

    /** Re-opens a closed or disabled address with a clean failure count. */
    async enable(actor: StaffActor, id: string): Promise<Endpoint> {
      return update(actor, id, "enable", [d.clock.now()], { action: "enable" });
    },
    ...deliveries,
  };
}
