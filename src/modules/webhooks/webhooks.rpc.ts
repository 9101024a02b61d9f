import type { ConnectRouter, ContextValues } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { WebhookEndpointStatus, WebhookService as WebhookRpc } from "../../../gen/hotelops/webhook/v1/webhook_pb.js";
import { AppError } from "../../errors.ts";
import { requireStaff } from "../auth/index.ts";
import type { Notification, NotificationsService } from "../notifications/index.ts";
import type { Endpoint } from "./endpoints.repository.ts";
import type { Recovery } from "./recovery.ts";
import type { PartnerCallback, PartnerCallbacks } from "./partner-callbacks.ts";
import { eventTypeDescription, subscribableEventTypes } from "./event-types.ts";
import type { StaffActor } from "./endpoint-input.ts";
import { maxEndpointsPerProperty, type WebhooksService } from "./webhooks.service.ts";
import { keyedKey } from "../../server/context.ts";

export const webhookRpcServices = [WebhookRpc];

/** The staff caller and the session's active property; the auth interceptor already enforced the rule. */
function actorOf(values: ContextValues, permission: string | undefined): StaffActor {
  const p = requireStaff(values);
  if (permission !== undefined && !p.permissions.has(permission))
    throw new AppError("forbidden", `Missing permission ${permission} in the active property.`);
  return { propertyId: p.activePropertyId, userId: p.userId, keyed: values.get(keyedKey) };
}

const manage = (values: ContextValues) => actorOf(values, "integrations.manage");
const ts = (d: Date | null) => (d === null ? undefined : timestampFromDate(d));
const opt = <T>(v: T | null) => (v === null ? undefined : v);
const statusOf = {
  open: WebhookEndpointStatus.OPEN,
  closed: WebhookEndpointStatus.CLOSED,
  disabled: WebhookEndpointStatus.DISABLED,
} as const;

function endpointOut(e: Endpoint) {
  return {
    id: e.id,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    status: statusOf[e.status],
    createdBy: opt(e.createdBy),
    createdAt: ts(e.createdAt),
    closedAt: ts(e.closedAt),
    closedReason: opt(e.closedReason),
    previousSecretExpiresAt: ts(e.previousSecretExpiresAt),
    publicKey: opt(e.publicKey),
    previousPublicKey: opt(e.previousPublicKey),
    maxPerSecond: e.maxPerSecond,
    maxConcurrency: e.maxConcurrency,
    lastSuccessAt: ts(e.lastSuccessAt),
    failuresSinceSuccess: e.failuresSinceSuccess,
  };
}

function recoveryOut(r: Recovery) {
  return {
    id: r.id,
    endpointId: r.endpointId,
    since: ts(r.since),
    status: r.status.toUpperCase(),
    eventsTotal: opt(r.eventsTotal),
    succeeded: r.succeeded,
    failed: r.failed,
    pending: r.pending,
    createdAt: ts(r.createdAt),
    finishedAt: ts(r.finishedAt),
  };
}

/** Optional proto fields as the service's optional inputs (absent stays absent). */
function deliveryOptions(req: {
  ed25519?: boolean | undefined;
  maxPerSecond?: number | undefined;
  maxConcurrency?: number | undefined;
}) {
  return {
    ...(req.ed25519 !== undefined ? { ed25519: req.ed25519 } : {}),
    ...(req.maxPerSecond !== undefined ? { maxPerSecond: req.maxPerSecond } : {}),
    ...(req.maxConcurrency !== undefined ? { maxConcurrency: req.maxConcurrency } : {}),
  };
}

function notificationOut(n: Notification) {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(n.data)) data[k] = typeof v === "string" ? v : JSON.stringify(v);
  return {
    id: n.id,
    kind: n.kind,
    title: n.title,
    body: n.body,
    data,
    createdAt: ts(n.createdAt),
    readAt: ts(n.readAt),
  };
}

function callbackOut(c: PartnerCallback) {
  return {
    id: c.id,
    clientId: c.clientId,
    url: c.url,
    eventTypes: c.eventTypes,
    description: c.description,
    status: statusOf[c.status],
    createdAt: ts(c.createdAt),
    closedAt: ts(c.closedAt),
    closedReason: opt(c.closedReason),
    lastSuccessAt: ts(c.lastSuccessAt),
    failuresSinceSuccess: c.failuresSinceSuccess,
  };
}

export function registerWebhookRpc(
  router: ConnectRouter,
  service: WebhooksService,
  notifications: NotificationsService,
  callbacks: PartnerCallbacks,
): void {
  router.service(WebhookRpc, {
    async createPartnerCallback(req, ctx) {
      const actor = manage(ctx.values);
      const r = await callbacks.create({
        clientId: req.clientId,
        propertyId: actor.propertyId,
        url: req.url,
        eventTypes: req.eventTypes,
        description: req.description,
        createdBy: actor.userId,
        keyed: actor.keyed,
      });
      return { callback: callbackOut(r.callback), secret: r.secret };
    },
    async listPartnerCallbacks(req, ctx) {
      const list = await callbacks.listOfProperty(manage(ctx.values).propertyId, req.clientId || undefined);
      return { callbacks: list.map(callbackOut) };
    },
    async deletePartnerCallback(req, ctx) {
      await callbacks.revoke({ propertyId: manage(ctx.values).propertyId }, req.callbackId);
      return {};
    },
    async createWebhookEndpoint(req, ctx) {
      const r = await service.create(manage(ctx.values), {
        url: req.url,
        eventTypes: req.eventTypes,
        description: req.description,
        ...deliveryOptions(req),
      });
      return { endpoint: endpointOut(r.endpoint), secret: r.secret };
    },
    async listWebhookEndpoints(_req, ctx) {
      return { endpoints: (await service.list(manage(ctx.values))).map(endpointOut) };
    },
    async getWebhookEndpoint(req, ctx) {
      return { endpoint: endpointOut(await service.get(manage(ctx.values), req.endpointId)) };
    },
    async updateWebhookEndpoint(req, ctx) {
      const patch = {
        eventTypes: req.eventTypes,
        ...deliveryOptions(req),
        ...(req.url !== undefined ? { url: req.url } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
      };
      return { endpoint: endpointOut(await service.patch(manage(ctx.values), req.endpointId, patch)) };
    },
    async deleteWebhookEndpoint(req, ctx) {
      await service.remove(manage(ctx.values), req.endpointId);
      return {};
    },
    async rotateWebhookEndpointSecret(req, ctx) {
      const r = await service.rotateSecret(manage(ctx.values), req.endpointId);
      return { endpoint: endpointOut(r.endpoint), secret: r.secret };
    },
    async disableWebhookEndpoint(req, ctx) {
      return { endpoint: endpointOut(await service.disable(manage(ctx.values), req.endpointId)) };
    },
    async enableWebhookEndpoint(req, ctx) {
      return { endpoint: endpointOut(await service.enable(manage(ctx.values), req.endpointId)) };
    },
    async testWebhookEndpoint(req, ctx) {
      const r = await service.sendTest(manage(ctx.values), req.endpointId);
      return { deliveryId: r.deliveryId, httpStatus: opt(r.httpStatus), durationMs: r.durationMs, error: opt(r.error) };
    },
    async listWebhookDeliveries(req, ctx) {
      const page = await service.history(manage(ctx.values), req.endpointId, {
        cursor: req.cursor,
        deliveryStatus: req.deliveryStatus,
        eventType: req.eventType,
        ...(req.limit > 0 ? { limit: req.limit } : {}),
      });
      return {
        deliveries: page.deliveries.map((a) => ({
          deliveryId: a.deliveryId,
          eventId: a.eventId,
          eventType: a.eventType,
          attempt: a.attempt,
          httpStatus: opt(a.httpStatus),
          durationMs: a.durationMs,
          errorClass: opt(a.errorClass),
          errorMessage: opt(a.errorMessage),
          startedAt: ts(a.startedAt),
          finishedAt: ts(a.finishedAt),
          deliveryStatus: a.deliveryStatus.toUpperCase(),
          recoveryId: opt(a.recoveryId),
        })),
        nextCursor: opt(page.nextCursor),
        recoveries: page.recoveries.map(recoveryOut),
      };
    },
    async recoverWebhookEndpoint(req, ctx) {
      const since = req.since === undefined ? undefined : timestampDate(req.since);
      return { recovery: recoveryOut(await service.recover(manage(ctx.values), req.endpointId, since)) };
    },
    async resendWebhookDelivery(req, ctx) {
      return service.resend(manage(ctx.values), req.endpointId, req.deliveryId);
    },
    listWebhookEventTypes(_req, ctx) {
      manage(ctx.values);
      const lang = ctx.requestHeader.get("accept-language");
      return {
        eventTypes: subscribableEventTypes.map((type) => ({ type, description: eventTypeDescription(type, lang) })),
        maxEndpoints: maxEndpointsPerProperty,
      };
    },
    async listNotifications(req, ctx) {
      const page = await notifications.list(actorOf(ctx.values, undefined), {
        limit: req.limit > 0 ? req.limit : 50,
        cursor: req.cursor,
      });
      return { notifications: page.notifications.map(notificationOut), nextCursor: page.nextCursor };
    },
    async markNotificationRead(req, ctx) {
      return {
        notification: notificationOut(await notifications.markRead(actorOf(ctx.values, undefined), req.notificationId)),
      };
    },
  });
}
