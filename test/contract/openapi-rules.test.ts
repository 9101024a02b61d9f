// The OpenAPI document states the validation rules the server enforces (one truth): a request at the edge of each
// rule is within the document and accepted by the server, one past it is outside the document and refused. Each
// exchange goes through the traffic check (test/helpers/openapi-traffic.ts); "outside the document" is shown by
// the same check flagging the request when a server would have accepted it. Redocly's recommended lint passes.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { createTrafficChecker, type Exchange } from "../helpers/openapi-traffic.ts";

const root = join(import.meta.dirname, "../..");
const checker = createTrafficChecker();
let app: TestApp;
let staff: string;
let admin: string;

beforeAll(async () => {
  app = await startTestApp();
  const property = await createTestProperty(app);
  staff = (await createStaffSession(app, { propertyCode: property.code, role: "manager" })).accessToken;
  admin = (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

interface Sent {
  status: number;
  body: { error?: { code: string; details?: { field: string }[] } } & Record<string, unknown>;
  /** The traffic check of this exchange as it happened. */
  problems: string[] | undefined;
  /** The traffic check had the server accepted it (200): flags a request outside the document. */
  ifAccepted: string;
}

async function send(method: string, path: string, token: string, body?: unknown): Promise<Sent> {
  const headers = new Headers({
    ...bearer(token),
    ...(body === undefined ? {} : { "content-type": "application/json" }),
  });
  const text = body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(`${app.baseUrl}${path}`, { method, headers, ...(text === undefined ? {} : { body: text }) });
  const responseText = await res.text();
  const exchange: Exchange = {
    method,
    url: new URL(`${app.baseUrl}${path}`),
    requestHeaders: headers,
    requestBody: text === undefined ? { kind: "none" } : { kind: "json", text },
    status: res.status,
    responseHeaders: res.headers,
    responseText,
  };
  return {
    status: res.status,
    body: JSON.parse(responseText) as Sent["body"],
    problems: checker.check(exchange),
    ifAccepted: (checker.check({ ...exchange, status: 200, responseText: "{}" }) ?? []).join("\n"),
  };
}

const OUTSIDE = "accepted a request the document forbids";

describe("the document states what the server enforces", () => {
  it("limit: 500 is within the document and accepted, 501 is outside and refused", async () => {
    const inside = await send("GET", "/api/mobile/v1/reservations?limit=500", staff);
    expect(inside.status).toBe(200);
    expect(inside.problems).toEqual([]);
    const outside = await send("GET", "/api/mobile/v1/reservations?limit=501", staff);
    expect(outside.status).toBe(400);
    expect(outside.problems).toEqual([]);
    expect(outside.ifAccepted).toContain(OUTSIDE);
  });

  it("webhook addresses: maxConcurrency 1-64, maxPerSecond 1-1000, event types with at least one subscribable", async () => {
    const base = { url: "https://127.0.0.1/hook", eventTypes: ["reservation.created"] };
    for (const over of [
      { maxConcurrency: 65 },
      { maxConcurrency: 0 },
      { maxPerSecond: 1001 },
      { eventTypes: ["webhook.test"] },
    ]) {
      const outside = await send("POST", "/api/panel/v1/webhook-endpoints", staff, { ...base, ...over });
      expect(outside.status, JSON.stringify(over)).toBe(422);
      expect(outside.body.error?.details?.[0]?.field).toBe(Object.keys(over)[0]);
      expect(outside.problems).toEqual([]);
      expect(outside.ifAccepted, JSON.stringify(over)).toContain(OUTSIDE);
    }
    // within the document: only the address (loopback) is refused, a check no document can state
    const inside = await send("POST", "/api/panel/v1/webhook-endpoints", staff, {
      ...base,
      eventTypes: ["guest.checked_out", "webhook.test"],
      maxConcurrency: 64,
      maxPerSecond: 1000,
    });
    expect(inside.body.error?.details?.[0]?.field).toBe("url");
    expect(inside.ifAccepted).not.toContain(OUTSIDE);
  });

  it("group and property codes: the pattern; int64 within +-(2^53-1); null where a value is optional", async () => {
    const property = {
      groupCode: "rules",
      code: "R-1",
      name: "Rules",
      timeZone: "Europe/Istanbul",
      currency: "TRY",
      businessDate: null,
      sandbox: null,
    };
    const inside = await send("POST", "/api/admin/v1/properties", admin, property);
    expect(inside.status).toBe(200);
    expect(inside.problems).toEqual([]);
    for (const over of [{ groupCode: "ab!" }, { code: "-X" }, { code: "ıx" }]) {
      const outside = await send("POST", "/api/admin/v1/properties", admin, { ...property, ...over });
      expect(outside.status, JSON.stringify(over)).toBe(400);
      expect(outside.ifAccepted, JSON.stringify(over)).toContain(OUTSIDE);
    }
    const doc = JSON.parse(readFileSync(join(root, "openapi/hotelops.v1.json"), "utf8")) as {
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const room = doc.components.schemas["hotelops.connectivity.v1.InboundRoom"]!.properties;
    expect(room.children!.type).toEqual(["integer", "null"]);
    expect(room.amountMinor).toMatchObject({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
  });
});

describe("Redocly", () => {
  it("lints the committed document clean with the committed config (webhooks have security, a licence)", () => {
    const run = spawnSync(join(root, "node_modules/.bin/redocly"), ["lint", "openapi/hotelops.v1.json"], {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      encoding: "utf8",
    });
    expect(`${run.stdout}${run.stderr}`).toContain("Your API description is valid");
    expect(run.status).toBe(0);
  }, 60_000);
});
