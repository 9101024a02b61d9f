import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/lib/clock.ts";
import { readOutbox } from "../../src/lib/mail.ts";
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

// Wall-clock tests of the production mechanism (the dispatcher of the app's worker role); only the retry
// schedule is configured short: 2 s, then 4 s, then 2 s (jitter pinned to the middle: factor 1.0).
const schedule = [2_000, 4_000, 2_000];
let ca: TestCa;
let app: WebhookApp;
let receiver: Receiver;
let property: { id: string; code: string };
let manager: { accessToken: string; email: string };
const handlers = new Map<string, (n: number, res: import("node:http").ServerResponse) => void>();
const counts = new Map<string, number>();
let inFlight = 0;
const maxInFlight = new Map<string, number>();

beforeAll(async () => {
  ca = createTestCa();
  receiver = await startReceiver(ca);
  receiver.behave((req, res) => {
    const path = req.url ?? "";
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    inFlight++;
    maxInFlight.set(path, Math.max(maxInFlight.get(path) ?? 0, inFlight));
    res.on("finish", () => inFlight--);
    const h = handlers.get(path);
    if (h !== undefined) h(n, res);
    else {
      res.writeHead(204);
      res.end();
    }
  });
  app = await startWebhookApp({
    ca,
    clock: systemClock,
    webhooks: { resolver: testResolver(), random: () => 0.5, retryDelaysMs: schedule },
  });
  property = await createTestProperty(app);
  manager = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

async function rest(method: string, path: string, body?: unknown) {
  const res = await fetch(`${app.baseUrl}/api/panel/v1${path}`, {
    method,
    headers: { ...bearer(manager.accessToken), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

async function endpoint(path: string, extra: object = {}): Promise<string> {
  const r = await rest("POST", "/webhook-endpoints", {
    url: receiver.url(path),
    eventTypes: ["availability.changed"],
    ...extra,
  });
  expect(r.status).toBe(201);
  return r.body.endpoint.id;
}

const emit = (n = 1) =>
  app.deps.transact((tx) =>
    recordEvents(
      tx,
      Array.from({ length: n }, () => ({
        propertyId: property.id,
        type: "availability.changed" as const,
        occurredAt: new Date(),
        data: {
          from: "2027-01-01",
          to: "2027-01-02",
          toExclusive: true as const,
          roomTypes: ["DBL"],
          reason: "inventory" as const,
        },
      })),
    ),
  );

const arrivals = (path: string) => receiver.received.filter((r) => r.path === path);

async function waitArrivals(path: string, count: number, ms: number) {
  const deadline = Date.now() + ms;
  while (arrivals(path).length < count) {
    if (Date.now() > deadline)
      throw new Error(`${path}: ${arrivals(path).length} of ${count} requests within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return arrivals(path);
}

/** Most requests that arrived within any window of `ms`. */
function peak(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function clear(ids: string[]) {
  for (const id of ids) await rest("DELETE", `/webhook-endpoints/${id}`);
}

describe("retries on the wall clock", () => {
  it("a receiver that fails twice gets its retries within +-10 % of the configured delays", async () => {
    handlers.set("/flaky", (n, res) => {
      res.writeHead(n <= 2 ? 500 : 204);
      res.end();
    });
    const id = await endpoint("/flaky");
    await emit();
    const got = await waitArrivals("/flaky", 3, 15_000);
    const gaps = [got[1]!.at - got[0]!.at, got[2]!.at - got[1]!.at];
    expect(got.map((g) => g.headers["service-delivery-attempt"])).toEqual(["1", "2", "3"]);
    for (const [i, gap] of gaps.entries()) {
      expect(gap).toBeGreaterThanOrEqual(schedule[i]! * 0.9);
      expect(gap).toBeLessThanOrEqual(schedule[i]! * 1.1);
    }
    await clear([id]);
  }, 30_000);

  it("429 and 503 with Retry-After are retried no earlier than asked", async () => {
    for (const [path, status] of [
      ["/busy", 429],
      ["/unavailable", 503],
    ] as const) {
      handlers.set(path, (n, res) => {
        res.writeHead(n === 1 ? status : 204, n === 1 ? { "retry-after": "4" } : {});
        res.end();
      });
    }
    const ids = [await endpoint("/busy"), await endpoint("/unavailable")];
    await emit();
    for (const path of ["/busy", "/unavailable"]) {
      const got = await waitArrivals(path, 2, 10_000);
      // The schedule alone would retry after 2 s; the receiver asked for 4.
      const gap = got[1]!.at - got[0]!.at;
      expect(gap).toBeGreaterThanOrEqual(4_000);
      expect(gap).toBeLessThanOrEqual(4_600);
    }
    await clear(ids);
  }, 20_000);

  it("410 Gone disables the address at once: e-mail and panel notification", async () => {
    handlers.set("/gone", (_n, res) => {
      res.writeHead(410);
      res.end();
    });
    const id = await endpoint("/gone");
    await emit();
    await waitArrivals("/gone", 1, 5_000);
    const deadline = Date.now() + 5_000;
    let ep = (await rest("GET", `/webhook-endpoints/${id}`)).body.endpoint;
    while (ep.status !== "CLOSED" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      ep = (await rest("GET", `/webhook-endpoints/${id}`)).body.endpoint;
    }
    expect(ep.status).toBe("CLOSED");
    expect(ep.closedReason).toContain("410");
    const notes = (await rest("GET", "/notifications")).body.notifications as {
      kind: string;
      data: { endpointId?: string };
    }[];
    expect(notes.some((n) => n.kind === "webhook.endpoint_closed" && n.data.endpointId === id)).toBe(true);
    let mail: { to: string; subject: string }[] = [];
    for (let i = 0; i < 100 && mail.length === 0; i++) {
      mail = (await readOutbox(app.dataDir)).filter((m) => m.to === manager.email);
      if (mail.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(mail[0]?.subject).toContain("Webhook address closed");
    // Nothing more is sent to it; no retry followed the 410.
    await emit();
    await new Promise((r) => setTimeout(r, 2_500));
    expect(arrivals("/gone")).toHaveLength(1);
    await clear([id]);
  }, 20_000);
});

describe("throttling per address", () => {
  it("holds the address's rate and concurrency; the excess waits and no retry is counted", async () => {
    handlers.set("/paced", (_n, res) => {
      setTimeout(() => {
        res.writeHead(204);
        res.end();
      }, 700);
    });
    const id = await endpoint("/paced", { maxPerSecond: 5, maxConcurrency: 2 });
    const started = performance.now();
    await emit(15);
    const got = await waitArrivals("/paced", 15, 20_000);
    const times = got.map((g) => g.at);
    // Starts 200 ms apart (at most 6 in a second), plus one for arrival jitter.
    expect(peak(times, 1_000)).toBeLessThanOrEqual(7);
    expect(maxInFlight.get("/paced")).toBeLessThanOrEqual(2);
    // 15 at 2 in flight of 700 ms each: at least 7 rounds.
    expect(Math.max(...times) - started).toBeGreaterThanOrEqual(4_500);
    const { rows } = await app.deps.db.pool.query<{ status: string; attempts: number; n: number }>(
      "select status, attempts, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by 1, 2",
      [id],
    );
    let settled = rows;
    for (let i = 0; i < 50 && !(settled.length === 1 && settled[0]!.status === "succeeded"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      settled = (
        await app.deps.db.pool.query<{ status: string; attempts: number; n: number }>(
          "select status, attempts, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by 1, 2",
          [id],
        )
      ).rows;
    }
    expect(settled).toEqual([{ status: "succeeded", attempts: 1, n: 15 }]);
    expect(got.every((g) => g.headers["service-delivery-attempt"] === "1")).toBe(true);
    await clear([id]);
  }, 30_000);

  it("validates the limits (1-1000 per second, 1-64 at once)", async () => {
    const bad = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/x"),
      eventTypes: ["availability.changed"],
      maxPerSecond: 0,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ field: "maxPerSecond", reason: "an integer from 1 to 1000" }]);
    const bad2 = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/x"),
      eventTypes: ["availability.changed"],
      maxConcurrency: 65,
    });
    expect(bad2.status).toBe(422);
    const ok = await rest("POST", "/webhook-endpoints", {
      url: receiver.url("/x"),
      eventTypes: ["availability.changed"],
    });
    expect(ok.body.endpoint).toMatchObject({ maxPerSecond: 50, maxConcurrency: 10 });
    const patched = await rest("PATCH", `/webhook-endpoints/${ok.body.endpoint.id}`, { maxPerSecond: 7 });
    expect(patched.body.endpoint).toMatchObject({ maxPerSecond: 7, maxConcurrency: 10 });
    await clear([ok.body.endpoint.id]);
  });
});
