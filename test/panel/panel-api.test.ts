// What the panel needs from the API beyond the first webhook RPCs: the event-type catalogue, an address's last
// success and failure count, history filters, and the partner clients that reach the property.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ManualClock } from "../../src/lib/clock.ts";
import { eventCatalogue, recordEvent } from "../../src/modules/events/index.ts";
import { WebhookService } from "../../gen/hotelops/webhook/v1/webhook_pb.js";
import { ApiAccessService } from "../../gen/hotelops/panel/v1/api_access_pb.js";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let other: { id: string; code: string };
let manager: { accessToken: string };
let viewer: { accessToken: string };
const clock = new ManualClock("2026-11-22T09:00:00.000Z");

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  app = await startWebhookApp({
    ca,
    clock,
    webhooks: { resolver: testResolver(), random: () => 0.5, timeoutMs: 2_000 },
  });
  property = await createTestProperty(app);
  other = await createTestProperty(app);
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  viewer = await createStaffSession(app, { propertyCode: property.code, role: "viewer" });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function rest(method: string, path: string, body?: unknown, token = manager.accessToken) {
  const res = await fetch(`${app.baseUrl}/api/panel/v1${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

const connect = () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });
const grpc = () => createGrpcTransport({ baseUrl: app.baseUrl });
const auth = (token: string) => ({ headers: bearer(token) });

async function until<T>(probe: () => Promise<T | undefined>, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("event type catalogue", () => {
  it("lists every subscribable type with a description and the address limit, on REST, Connect and gRPC; a viewer gets 403", async () => {
    const r = await rest("GET", "/webhook-event-types");
    expect(r.status).toBe(200);
    expect(r.body.maxEndpoints).toBe(10);
    const types = r.body.eventTypes.map((t: { type: string }) => t.type);
    expect(types).toEqual([
      "reservation.created",
      "reservation.updated",
      "reservation.cancelled",
      "guest.checked_in",
      "guest.checked_out",
      "folio.payment_posted",
      "invoice.issued",
      "availability.changed",
    ]);
    // One source: every description is the event catalogue's (the OpenAPI webhooks section shows the same).
    for (const t of r.body.eventTypes)
      expect(t.description).toBe(eventCatalogue[t.type as keyof typeof eventCatalogue].summary);
    const turkish = await fetch(`${app.baseUrl}/api/panel/v1/webhook-event-types`, {
      headers: { ...bearer(manager.accessToken), "accept-language": "tr-TR,tr;q=0.9" },
    }).then((x) => x.json() as Promise<{ eventTypes: { type: keyof typeof eventCatalogue; description: string }[] }>);
    expect(turkish.eventTypes.map((t) => t.description)).toEqual(
      turkish.eventTypes.map((t) => eventCatalogue[t.type].summaryTr),
    );
    for (const transport of [connect(), grpc()]) {
      const got = await createClient(WebhookService, transport).listWebhookEventTypes({}, auth(manager.accessToken));
      expect(got.eventTypes.map((t) => t.type)).toEqual(types);
      const tr = await createClient(WebhookService, transport).listWebhookEventTypes(
        {},
        { headers: { ...auth(manager.accessToken).headers, "accept-language": "tr" } },
      );
      expect(tr.eventTypes.map((t) => t.description)).toEqual(turkish.eventTypes.map((t) => t.description));
      expect(got.maxEndpoints).toBe(10);
      const denied = await createClient(WebhookService, transport)
        .listWebhookEventTypes({}, auth(viewer.accessToken))
        .catch((e: unknown) => e);
      expect(ConnectError.from(denied).code).toBe(Code.PermissionDenied);
    }
    expect((await rest("GET", "/webhook-event-types", undefined, viewer.accessToken)).status).toBe(403);
  });
});

describe("address state and history filters", () => {
  it("an address shows its last success and failures since; the history filters by delivery status and event type", async () => {
    const created = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/f"),
      eventTypes: ["reservation.created", "invoice.issued"],
    });
    expect(created.status).toBe(201);
    const id = created.body.endpoint.id as string;
    expect(created.body.endpoint).toMatchObject({ lastSuccessAt: null, failuresSinceSuccess: 0 });

    // the test button's answer does not count as the address's success (it may be closed); an event does
    const ok = await rest("POST", `/webhook-endpoints/${id}/test`, {});
    expect(ok.body.httpStatus).toBe(204);
    expect((await rest("GET", `/webhook-endpoints/${id}`)).body.endpoint.lastSuccessAt).toBeNull();
    await app.deps.transact((tx) =>
      recordEvent(tx, {
        propertyId: property.id,
        type: "reservation.created",
        occurredAt: clock.now(),
        data: { id: "r1" },
      }),
    );
    const afterOk = await until(async () => {
      const e = (await rest("GET", `/webhook-endpoints/${id}`)).body.endpoint;
      return e.lastSuccessAt === null ? undefined : e;
    });
    expect(afterOk.lastSuccessAt).toBe(clock.now().toISOString());
    expect(afterOk.failuresSinceSuccess).toBe(0);

    receiver.behave((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    await app.deps.transact((tx) =>
      recordEvent(tx, { propertyId: property.id, type: "invoice.issued", occurredAt: clock.now(), data: { id: "i1" } }),
    );
    await until(async () =>
      (await rest("GET", `/webhook-endpoints/${id}`)).body.endpoint.failuresSinceSuccess === 1 ? true : undefined,
    );
    const listed = (await rest("GET", "/webhook-endpoints")).body.endpoints.find((e: { id: string }) => e.id === id);
    expect(listed).toMatchObject({ failuresSinceSuccess: 1, lastSuccessAt: afterOk.lastSuccessAt });

    const all = (await rest("GET", `/webhook-endpoints/${id}/deliveries`)).body.deliveries;
    expect(all.map((d: { eventType: string }) => d.eventType).sort()).toEqual([
      "invoice.issued",
      "reservation.created",
      "webhook.test",
    ]);
    const pending = (await rest("GET", `/webhook-endpoints/${id}/deliveries?deliveryStatus=PENDING`)).body.deliveries;
    expect(pending.map((d: { eventType: string; deliveryStatus: string }) => [d.eventType, d.deliveryStatus])).toEqual([
      ["invoice.issued", "PENDING"],
    ]);
    const tests = (await rest("GET", `/webhook-endpoints/${id}/deliveries?eventType=webhook.test`)).body.deliveries;
    expect(tests.map((d: { eventType: string }) => d.eventType)).toEqual(["webhook.test"]);
    expect(
      (await rest("GET", `/webhook-endpoints/${id}/deliveries?eventType=webhook.test&deliveryStatus=PENDING`)).body
        .deliveries,
    ).toEqual([]);
    const bad = await rest("GET", `/webhook-endpoints/${id}/deliveries?deliveryStatus=LOST`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("deliveryStatus");

    for (const transport of [connect(), grpc()]) {
      const c = createClient(WebhookService, transport);
      const page = await c.listWebhookDeliveries(
        { endpointId: id, deliveryStatus: "SUCCEEDED" },
        auth(manager.accessToken),
      );
      expect(page.deliveries.map((d) => d.eventType)).toEqual(["reservation.created", "webhook.test"]);
      const ep = await c.getWebhookEndpoint({ endpointId: id }, auth(manager.accessToken));
      expect(ep.endpoint?.failuresSinceSuccess).toBe(1);
      expect(ep.endpoint?.lastSuccessAt).toBeDefined();
      const err = await c
        .listWebhookDeliveries({ endpointId: id, deliveryStatus: "lost" }, auth(manager.accessToken))
        .catch((e: unknown) => e);
      expect(ConnectError.from(err).code).toBe(Code.InvalidArgument);
    }
    receiver.behave((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await rest("DELETE", `/webhook-endpoints/${id}`);
  });
});

describe("API access", () => {
  it("lists the partner clients granted the active property with environment and last token issue, on REST, Connect and gRPC; a viewer gets 403", async () => {
    const live = await createTestClient(app, {
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["availability.read"],
      approved: true,
    });
    const sandbox = await createTestClient(app, {
      provider: "beta",
      propertyCodes: [property.code, other.code],
      scopes: ["reservations.read", "reservations.write"],
    });
    const elsewhere = await createTestClient(app, {
      provider: "gamma",
      propertyCodes: [other.code],
      scopes: ["availability.read"],
    });
    const r = await rest("GET", "/api-clients");
    expect(r.status).toBe(200);
    const ids = r.body.clients.map((c: { clientId: string }) => c.clientId);
    expect(ids).toContain(live.clientId);
    expect(ids).toContain(sandbox.clientId);
    expect(ids).not.toContain(elsewhere.clientId);
    const l = r.body.clients.find((c: { clientId: string }) => c.clientId === live.clientId);
    expect(l).toMatchObject({ provider: "acme", scopes: ["availability.read"], environment: "live" });
    expect(l.approvedAt).not.toBeNull();
    // the helper issued a token through the token service: recorded on the client
    expect(l.lastTokenAt).toBe(clock.now().toISOString());
    expect(r.body.clients.find((c: { clientId: string }) => c.clientId === sandbox.clientId)).toMatchObject({
      environment: "test",
      approvedAt: null,
    });
    expect(JSON.stringify(r.body)).not.toMatch(/secret/i);

    for (const transport of [connect(), grpc()]) {
      const c = createClient(ApiAccessService, transport);
      const got = await c.listApiClients({}, auth(manager.accessToken));
      expect(got.clients.map((x) => x.clientId).sort()).toEqual([live.clientId, sandbox.clientId].sort());
      const denied = await c.listApiClients({}, auth(viewer.accessToken)).catch((e: unknown) => e);
      expect(ConnectError.from(denied).code).toBe(Code.PermissionDenied);
    }
    expect((await rest("GET", "/api-clients", undefined, viewer.accessToken)).status).toBe(403);
    expect((await fetch(`${app.baseUrl}/api/panel/v1/api-clients`)).status).toBe(401);
  });
});
