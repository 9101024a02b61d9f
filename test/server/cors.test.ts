// CORS as a browser meets it: a page served on a second loopback origin (127.0.0.2) calls the API on 127.0.0.1
// over REST (fetch), Connect and gRPC-Web (the SDK's browser entry bundled by esbuild), in headless chromium.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createCors } from "../../src/server/cors.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { launchChromium } from "../helpers/prerequisites.ts";

async function servePage(host: string, script: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === "/sdk.js") res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    else
      res
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><title>partner app</title><script src="/sdk.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}` };
}

let app: TestApp;
let browser: Browser;
let allowed: { server: Server; origin: string };
let other: { server: Server; origin: string };
beforeAll(async () => {
  const bundle = await build({
    entryPoints: [new URL("../../sdk/src/browser.ts", import.meta.url).pathname],
    bundle: true,
    write: false,
    format: "iife",
    globalName: "hotelops",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0]!.text;
  allowed = await servePage("127.0.0.2", script);
  other = await servePage("127.0.0.3", script);
  app = await startTestApp({ env: { CORS_ORIGINS: `https://app.example.com, ${allowed.origin}` } });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
  allowed?.server.close();
  other?.server.close();
});

async function open(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(origin);
  return page;
}

describe("CORS in a browser on another origin", () => {
  it("REST: a preflighted GET with a bearer token, exposed headers, and a JSON login error the page can read", async () => {
    const p = await createTestProperty(app);
    const client = await createTestClient(app, { propertyCodes: [p.code], scopes: ["availability.read"] });
    const page = await open(allowed.origin);
    const out = await page.evaluate(
      async ({ api, token }) => {
        const caps = await fetch(`${api}/api/v1/capabilities`, { headers: { authorization: `Bearer ${token}` } });
        const login = await fetch(`${api}/api/mobile/v1/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
          body: JSON.stringify({
            hotelCode: "NOPE",
            email: "nobody@example.com",
            password: "wrong-password",
            deviceId: "browser",
            deviceName: "Browser",
          }),
        });
        return {
          caps: {
            status: caps.status,
            body: (await caps.json()) as { clientId: string },
            requestId: caps.headers.get("x-request-id"),
            limit: caps.headers.get("ratelimit-limit"),
          },
          login: {
            status: login.status,
            body: (await login.json()) as { error: { code: string } },
            requestId: login.headers.get("x-request-id"),
          },
        };
      },
      { api: app.baseUrl, token: client.accessToken },
    );
    expect(out.caps.status).toBe(200);
    expect(out.caps.body.clientId).toBe(client.clientId);
    expect(out.caps.requestId).toMatch(/\S/);
    expect(Number(out.caps.limit)).toBeGreaterThan(0);
    expect(out.login.status).toBe(401);
    expect(out.login.body.error.code).toBe("unauthorized");
    expect(out.login.requestId).toMatch(/\S/);
    await page.close();
  });

  it("Connect and gRPC-Web through the SDK's browser entry: a public call, an authenticated one, and an error code from grpc-status", async () => {
    const p = await createTestProperty(app);
    const client = await createTestClient(app, { propertyCodes: [p.code], scopes: ["availability.read"] });
    const page = await open(allowed.origin);
    const out = await page.evaluate(
      async ({ api, token }) => {
        type Sdk = typeof import("../../sdk/src/browser.ts");
        const sdk = (globalThis as unknown as { hotelops: Sdk }).hotelops;
        const results: Record<string, unknown> = {};
        for (const transport of ["connect", "grpc-web"] as const) {
          const status = await sdk.createHotelOpsClient(sdk.StatusService, { baseUrl: api, transport }).getStatus({});
          const caps = await sdk
            .createHotelOpsClient(sdk.ConnectivityService, { baseUrl: api, transport, auth: token })
            .getCapabilities({});
          const refused = await sdk
            .createHotelOpsClient(sdk.ConnectivityService, { baseUrl: api, transport })
            .getCapabilities({})
            .then(
              () => "no error",
              (e: unknown) => sdk.ConnectError.from(e).code,
            );
          results[transport] = { status: status.status, clientId: caps.clientId, refused };
        }
        return results;
      },
      { api: app.baseUrl, token: client.accessToken },
    );
    for (const transport of ["connect", "grpc-web"])
      expect(out[transport], transport).toEqual({ status: "operational", clientId: client.clientId, refused: 16 });
    await page.close();
  });

  it("a page on an origin not in CORS_ORIGINS gets nothing (REST, Connect and gRPC-Web fail in the browser)", async () => {
    const page = await open(other.origin);
    const out = await page.evaluate(async (api) => {
      type Sdk = typeof import("../../sdk/src/browser.ts");
      const sdk = (globalThis as unknown as { hotelops: Sdk }).hotelops;
      const rest = await fetch(`${api}/api/v1/status`).then(
        (r) => `HTTP ${r.status}`,
        (e: unknown) => String(e),
      );
      const rpc = [];
      for (const transport of ["connect", "grpc-web"] as const) {
        rpc.push(
          await sdk
            .createHotelOpsClient(sdk.StatusService, { baseUrl: api, transport })
            .getStatus({})
            .then(
              () => "ok",
              (e: unknown) => sdk.ConnectError.from(e).rawMessage,
            ),
        );
      }
      return { rest, rpc };
    }, app.baseUrl);
    expect(out.rest).toMatch(/Failed to fetch/);
    expect(out.rpc).toEqual(["Failed to fetch", "Failed to fetch"]); // the browser withheld the answer
    await page.close();
  });
});

describe("CORS answers on the wire", () => {
  it("preflight: 204 with our methods, request headers and a max age for an allowed origin; 403 with our error body otherwise", async () => {
    for (const path of ["/api/v1/capabilities", "/hotelops.status.v1.StatusService/GetStatus"]) {
      const ok = await fetch(`${app.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example.com",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, idempotency-key, content-type",
        },
      });
      expect(ok.status, path).toBe(204);
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(ok.headers.get("vary")).toContain("Origin");
      expect(ok.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE");
      const allowHeaders = ok.headers.get("access-control-allow-headers")!.toLowerCase().split(", ");
      expect(allowHeaders).toEqual(
        expect.arrayContaining([
          "authorization",
          "idempotency-key",
          "content-type",
          "connect-protocol-version",
          "connect-timeout-ms",
          "x-grpc-web",
          "grpc-timeout",
          "x-user-agent",
        ]),
      );
      const refused = await fetch(`${app.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" },
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    }
  });

  it("simple requests: exposed headers for an allowed origin, no CORS headers without Origin or for another origin", async () => {
    const ok = await fetch(`${app.baseUrl}/api/v1/status`, { headers: { origin: "https://app.example.com" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const exposed = ok.headers.get("access-control-expose-headers")!.toLowerCase().split(", ");
    expect(exposed).toEqual(
      expect.arrayContaining([
        "x-request-id",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "retry-after",
        "idempotency-replayed",
        "grpc-status",
        "grpc-message",
        "grpc-status-details-bin",
      ]),
    );
    expect((await fetch(`${app.baseUrl}/api/v1/status`)).headers.get("access-control-allow-origin")).toBeNull();
    const foreign = await fetch(`${app.baseUrl}/api/v1/status`, { headers: { origin: "https://evil.example.com" } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("CORS_ORIGINS: none by default in production, any loopback origin in development, validated", () => {
    const base = { DATABASE_URL: "postgres://x@127.0.0.1/x" };
    expect(loadConfig({ ...base, NODE_ENV: "production" }).corsOrigins).toEqual([]);
    expect(loadConfig({ ...base }).corsOrigins).toEqual(["loopback"]);
    expect(loadConfig({ ...base, CORS_ORIGINS: "none" }).corsOrigins).toEqual([]);
    expect(
      loadConfig({ ...base, NODE_ENV: "production", CORS_ORIGINS: "https://a.example.com,https://b.example.com:8443" })
        .corsOrigins,
    ).toEqual(["https://a.example.com", "https://b.example.com:8443"]);
    expect(() => loadConfig({ ...base, CORS_ORIGINS: "https://a.example.com/path" })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ ...base, CORS_ORIGINS: "a.example.com" })).toThrow(/CORS_ORIGINS/);
  });

  it('"loopback" (the development default) allows any port of localhost, 127.0.0.1 and [::1], nothing else', async () => {
    const cors = createCors(["loopback"]);
    const server = createServer((req, res) => {
      if (!cors.handle(req, res, "test")) res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      for (const origin of [
        "http://localhost:5173",
        "http://127.0.0.1:3000",
        "http://[::1]:8080",
        "https://localhost",
      ]) {
        expect((await fetch(url, { headers: { origin } })).headers.get("access-control-allow-origin"), origin).toBe(
          origin,
        );
      }
      for (const origin of ["http://localhost.example.com", "http://127.0.0.2:3000", "https://app.example.com"]) {
        expect(
          (await fetch(url, { headers: { origin } })).headers.get("access-control-allow-origin"),
          origin,
        ).toBeNull();
      }
    } finally {
      server.close();
    }
  });
});
