import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAriGrid } from "../helpers/hotel-fixtures.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { killAllServices, startService, type ServiceProcess } from "../helpers/service-process.ts";

// `npm start` caps V8's old generation (--max-old-space-size): the largest answer the API gives, an ARI page of
// 100,000 cells that Connect and gRPC build whole, must fit many times over beside a full answer cache.

let admin: TestApp;
let service: ServiceProcess;
let token: string;
const code = "MEM-1";

beforeAll(async () => {
  admin = await startTestApp();
  const property = await createTestProperty(admin, { code, businessDate: "2027-01-01" });
  await seedAriGrid(
    admin,
    property.id,
    Array.from({ length: 27 }, (_, i) => `RT${i}`),
    10,
  );
  token = (
    await createTestClient(admin, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [code],
      scopes: ["ari.read", "availability.read"],
    })
  ).accessToken;
  service = await startService({ ROLE: "api", DATABASE_URL: admin.config.databaseUrl! });
}, 120_000);
afterAll(async () => {
  killAllServices();
  await admin?.close();
});

describe("the service under npm start's heap limit", () => {
  it("answers a full answer cache and 12 whole ARI pages at once over gRPC and Connect, and stays up", async () => {
    // about 40 MiB of distinct availability answers: more than the cache (32 MiB) keeps
    for (let i = 0; i < 40; i++) {
      const from = new Date(Date.UTC(2027, 0, 1 + i)).toISOString().slice(0, 10);
      const to = new Date(Date.UTC(2028, 0, 1 + i)).toISOString().slice(0, 10);
      const res = await fetch(`${service.base}/api/v1/properties/${code}/availability?from=${from}&to=${to}`, {
        headers: bearer(token),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const q = { propertyCode: code, from: "2027-01-01", to: "2028-01-02" };
    const clients = [
      ...Array.from({ length: 8 }, () => createGrpcTransport({ baseUrl: service.base })),
      ...Array.from({ length: 4 }, () => createConnectTransport({ baseUrl: service.base, httpVersion: "1.1" })),
    ].map((t) => createClient(ConnectivityService, t));
    const pages = await Promise.all(clients.map((c) => c.getAri(q, { headers: bearer(token) })));
    for (const page of pages) {
      expect(page.roomTypes).toHaveLength(27);
      expect(page.roomTypes.flatMap((rt) => rt.ratePlans.flatMap((rp) => rp.days))).toHaveLength(98_820);
      expect(page.hasMore).toBe(false);
    }
    expect(service.child.exitCode).toBeNull();
    expect((await fetch(`${service.base}/readyz`)).status).toBe(200);
  });
});
