import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { WebhookService } from "../../gen/hotelops/webhook/v1/webhook_pb.js";
import { systemClock } from "../../src/lib/clock.ts";
import { recordEvents } from "../../src/modules/events/index.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import {
  createTestCa,
  startReceiver,
  startWebhookApp,
  testResolver,
  type Receiver,
  type TestCa,
  type WebhookApp,
} from "../helpers/webhooks.ts";

// Real clock and the production dispatcher; the retry schedule is one short retry so failures settle fast.
let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let manager: { accessToken: string };
let viewer: { accessToken: string };
let down = true;

const auth = (token: string) => [
  (next: (r: { header: Headers }) => unknown) => (req: { header: Headers }) => (
    req.header.set("authorization", `Bearer ${token}`),
    next(req)
  ),
];
function grpc(token: string): Client<typeof WebhookService> {
  return createClient(
    WebhookService,
    createGrpcTransport({ baseUrl: app.baseUrl, interceptors: auth(token) as never }),
  );
}
function connect(token: string): Client<typeof WebhookService> {
  return createClient(
    WebhookService,
    createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors: auth(token) as never }),
  );
}

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  receiver.behave((_req, res) => {
    res.writeHead(down ? 500 : 204);
    res.end();
  });
  app = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver(), retryDelaysMs: [300] } });
  property = await createTestProperty(app);
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

const emit = (n: number) =>
  app.deps.transact((tx) =>
    recordEvents(
      tx,
      Array.from({ length: n }, (_, i) => ({
        propertyId: property.id,
        type: "reservation.cancelled" as const,
        occurredAt: new Date(),
        data: { id: `r${i}`, code: `R-${i}` },
      })),
    ),
  );

async function until<T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function statusCounts(endpointId: string): Promise<Record<string, number>> {
  const { rows } = await app.deps.db.pool.query<{ status: string; n: number }>(
    "select status, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by 1",
    [endpointId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

function peak(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe("recovery", () => {
  it("re-sends every failed event once, paced, with progress in the history; asking again is harmless (REST, Connect, gRPC)", async () => {
    const created = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/rec"),
      eventTypes: ["reservation.cancelled"],
      maxPerSecond: 10,
    });
    const endpointId = created.body.endpoint.id as string;
    // One event delivered while the receiver is up, then 25 that fail for good while it is down.
    down = false;
    const [okEvent] = await emit(1);
    await until(async () => ((await statusCounts(endpointId)).succeeded === 1 ? true : undefined));
    down = true;
    const failedEvents = await emit(25);
    await until(async () => ((await statusCounts(endpointId)).failed === 25 ? true : undefined));
    const before = receiver.received.length;

    down = false;
    const since = new Date(Date.now() - 3600_000);
    const started = await rest("POST", `/webhook-endpoints/${endpointId}/recover`, { since: since.toISOString() });
    expect(started.status).toBe(202);
    expect(started.body.recovery).toMatchObject({ endpointId, status: "RUNNING", since: since.toISOString() });
    // Asked again while it runs (Connect): the same recovery, nothing started twice.
    const again = await connect(manager.accessToken).recoverWebhookEndpoint({
      endpointId,
      since: timestampFromDate(since),
    });
    expect(again.recovery?.id).toBe(started.body.recovery.id);

    const done = await until(async () => {
      const page = await grpc(manager.accessToken).listWebhookDeliveries({ endpointId });
      const r = page.recoveries.find((x) => x.id === started.body.recovery.id);
      return r?.status === "DONE" ? { r, page } : undefined;
    }, 20_000);
    expect(done.r).toMatchObject({ eventsTotal: 25, succeeded: 25, failed: 0, pending: 0 });
    expect(
      done.page.deliveries.filter((a) => a.recoveryId === started.body.recovery.id && a.httpStatus === 204),
    ).toHaveLength(25);

    const resent = receiver.received.slice(before).filter((r) => r.path === "/rec");
    expect(resent.map((r) => r.headers["service-event-id"]).sort()).toEqual([...failedEvents].sort());
    expect(resent.map((r) => r.headers["service-event-id"])).not.toContain(okEvent);
    // New deliveries of the same events, paced at the address's 10 per second: starts are 100 ms apart (at most
    // 11 in a second); arrival times carry connection and scheduling jitter on top, hence one more.
    expect(new Set(resent.map((r) => r.headers["service-delivery-id"])).size).toBe(25);
    expect(
      peak(
        resent.map((r) => r.at),
        1_000,
      ),
    ).toBeLessThanOrEqual(12);
    expect(Math.max(...resent.map((r) => r.at)) - Math.min(...resent.map((r) => r.at))).toBeGreaterThanOrEqual(2_000);

    // A second recovery over gRPC finds nothing left to send: no event goes out twice.
    const second = await grpc(manager.accessToken).recoverWebhookEndpoint({
      endpointId,
      since: timestampFromDate(since),
    });
    expect(second.recovery?.id).not.toBe(started.body.recovery.id);
    const secondDone = await until(async () => {
      const page = await rest("GET", `/webhook-endpoints/${endpointId}/deliveries`);
      const r = page.body.recoveries.find((x: { id: string }) => x.id === second.recovery?.id);
      return r?.status === "DONE" ? r : undefined;
    });
    expect(secondDone).toMatchObject({ eventsTotal: 0, succeeded: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.slice(before).filter((r) => r.path === "/rec")).toHaveLength(25);
  }, 60_000);

  it("refuses bad input, missing permission and closed addresses on every face", async () => {
    const created = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/rec2"),
      eventTypes: ["reservation.cancelled"],
    });
    const endpointId = created.body.endpoint.id as string;
    const tooOld = new Date(Date.now() - 31 * 24 * 3600_000);

    const r1 = await rest("POST", `/webhook-endpoints/${endpointId}/recover`, { since: tooOld.toISOString() });
    expect(r1.status).toBe(400);
    expect(r1.body.error.details).toEqual([{ field: "since", reason: "at most 30 days back" }]);
    const r2 = await rest("POST", `/webhook-endpoints/${endpointId}/recover`, {});
    expect(r2.status).toBe(400);
    const g1 = await grpc(manager.accessToken)
      .recoverWebhookEndpoint({ endpointId, since: timestampFromDate(tooOld) })
      .catch((e: unknown) => e);
    expect(g1).toBeInstanceOf(ConnectError);
    expect((g1 as ConnectError).code).toBe(Code.InvalidArgument);
    const c1 = await connect(manager.accessToken)
      .recoverWebhookEndpoint({ endpointId, since: timestampFromDate(new Date(Date.now() + 3600_000)) })
      .catch((e: unknown) => e);
    expect((c1 as ConnectError).code).toBe(Code.InvalidArgument);

    // integrations.manage is needed.
    expect(
      (
        await rest(
          "POST",
          `/webhook-endpoints/${endpointId}/recover`,
          { since: new Date().toISOString() },
          viewer.accessToken,
        )
      ).status,
    ).toBe(403);
    const g2 = await grpc(viewer.accessToken)
      .recoverWebhookEndpoint({ endpointId, since: timestampFromDate(new Date()) })
      .catch((e: unknown) => e);
    expect((g2 as ConnectError).code).toBe(Code.PermissionDenied);
    const c2 = await connect(viewer.accessToken)
      .recoverWebhookEndpoint({ endpointId, since: timestampFromDate(new Date()) })
      .catch((e: unknown) => e);
    expect((c2 as ConnectError).code).toBe(Code.PermissionDenied);

    // A disabled address is enabled first (409), and another property's address is not found.
    await rest("POST", `/webhook-endpoints/${endpointId}/disable`, {});
    expect(
      (await rest("POST", `/webhook-endpoints/${endpointId}/recover`, { since: new Date().toISOString() })).status,
    ).toBe(409);
    const g3 = await grpc(manager.accessToken)
      .recoverWebhookEndpoint({ endpointId, since: timestampFromDate(new Date()) })
      .catch((e: unknown) => e);
    expect((g3 as ConnectError).code).toBe(Code.FailedPrecondition);
    const other = await createTestProperty(app);
    const otherManager = await createStaffSession(app, { propertyCode: other.code, role: "manager" });
    expect(
      (
        await rest(
          "POST",
          `/webhook-endpoints/${endpointId}/recover`,
          { since: new Date().toISOString() },
          otherManager.accessToken,
        )
      ).status,
    ).toBe(404);
  });
});
