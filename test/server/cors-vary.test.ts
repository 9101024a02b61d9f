// CORS details a browser or a shared cache meets on every face: an echoed Access-Control-Allow-Origin always comes
// with `Vary: Origin` (beside `Vary: Accept-Encoding` on REST answers), and a preflight allows the W3C trace
// context headers browser OpenTelemetry adds to every call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

const ORIGIN = "https://app.example.com";
let app: TestApp;
let token: string;
let propertyCode: string;
beforeAll(async () => {
  app = await startTestApp({ env: { CORS_ORIGINS: ORIGIN } });
  const property = await createTestProperty(app);
  propertyCode = property.code;
  token = (await createTestClient(app, { propertyCodes: [property.code], scopes: ["availability.read"] })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const varyOf = (headers: Headers): string[] =>
  (headers.get("vary") ?? "")
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== "");

describe("CORS: Vary: Origin beside every echoed origin", () => {
  it("REST partner answers, errors and the status keep Vary: Origin with Vary: Accept-Encoding", async () => {
    const requests: [string, Record<string, string>][] = [
      [`/api/v1/capabilities`, bearer(token)],
      [`/api/v1/properties/${propertyCode}/mappings`, { ...bearer(token), "accept-encoding": "gzip" }],
      [`/api/v1/capabilities`, {}],
      [`/api/v1/status`, {}],
    ];
    for (const [path, headers] of requests) {
      const res = await fetch(`${app.baseUrl}${path}`, { headers: { origin: ORIGIN, ...headers } });
      await res.arrayBuffer();
      expect(res.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
      expect(varyOf(res.headers), path).toContain("origin");
      if (res.ok) expect(varyOf(res.headers), path).toContain("accept-encoding");
    }
  });

  it("Connect, gRPC-Web and gRPC answers carry Vary: Origin with the echoed origin", async () => {
    const transports = {
      connect: createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      "connect-json": createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
      "grpc-web": createGrpcWebTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      grpc: createGrpcTransport({ baseUrl: app.baseUrl }),
    };
    for (const [face, transport] of Object.entries(transports)) {
      const client = createClient(ConnectivityService, transport);
      let seen: Headers | undefined;
      await client.getCapabilities({}, { headers: { origin: ORIGIN, ...bearer(token) }, onHeader: (h) => (seen = h) });
      expect(seen?.get("access-control-allow-origin"), face).toBe(ORIGIN);
      expect(varyOf(seen!), face).toContain("origin");
    }
  });

  it("a preflight allows traceparent and tracestate (and varies on Origin)", async () => {
    for (const path of [`/api/v1/properties/${propertyCode}/mappings`, "/hotelops.status.v1.StatusService/GetStatus"]) {
      const res = await fetch(`${app.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: ORIGIN,
          "access-control-request-method": path.startsWith("/api/") ? "GET" : "POST",
          "access-control-request-headers": "authorization,traceparent,tracestate",
        },
      });
      expect(res.status, path).toBe(204);
      const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase().split(", ");
      expect(allowed, path).toEqual(expect.arrayContaining(["authorization", "traceparent", "tracestate"]));
      expect(varyOf(res.headers), path).toContain("origin");
    }
  });
});
