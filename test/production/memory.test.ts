import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { stayInRoom } from "../../src/modules/reservations/index.ts";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAriGrid } from "../helpers/hotel-fixtures.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { killAllServices, startService, type ServiceProcess } from "../helpers/service-process.ts";

// `npm start` caps V8's old generation (--max-old-space-size): the largest answers the API gives, an ARI page of
// 100,000 cells with every restriction set and a year's availability of the most room types a property may have
// (100), which Connect and gRPC build whole, must fit many at once beside a full answer cache.

let admin: TestApp;
let service: ServiceProcess;
let token: string;
const code = "MEM-1";

beforeAll(async () => {
  admin = await startTestApp();
  const property = await createTestProperty(admin, { code, businessDate: "2027-01-01" });
  // 27 room types with 10 rate plans (98,820 cells), 73 without (they add no cells to the page)
  await seedAriGrid(
    admin,
    property.id,
    Array.from({ length: 27 }, (_, i) => `RT${i}`),
    10,
  );
  const inventory = createInventoryService({
    transact: admin.deps.transact,
    pool: admin.db.pool,
    clock: admin.clock,
    stayInRoom,
  });
  for (let i = 27; i < 100; i++)
    await inventory.createRoomType(property.id, { code: `RT${i}`, name: `Type ${i}`, maxOccupancy: 2 });
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
  it("answers 12 whole ARI pages and 12 years of availability at once over gRPC and Connect beside a full answer cache, and stays up", async () => {
    const range = (i: number) => ({
      from: new Date(Date.UTC(2027, 0, 1 + i)).toISOString().slice(0, 10),
      to: new Date(Date.UTC(2027, 0, 1 + i + 366)).toISOString().slice(0, 10),
    });
    // distinct availability answers (100 room types x 366 days each): more than the cache (32 MiB) keeps
    for (let i = 0; i < 10; i++) {
      const { from, to } = range(i);
      const res = await fetch(`${service.base}/api/v1/properties/${code}/availability?from=${from}&to=${to}`, {
        headers: bearer(token),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const clients = [
      ...Array.from({ length: 8 }, () => createGrpcTransport({ baseUrl: service.base })),
      ...Array.from({ length: 4 }, () => createConnectTransport({ baseUrl: service.base, httpVersion: "1.1" })),
    ].map((t) => createClient(ConnectivityService, t));
    const headers = bearer(token);
    const pages = await Promise.all(
      clients.map((c) => c.getAri({ propertyCode: code, from: "2027-01-01", to: "2028-01-02" }, { headers })),
    );
    for (const page of pages) {
      expect(page.roomTypes).toHaveLength(100);
      expect(page.roomTypes.flatMap((rt) => rt.ratePlans.flatMap((rp) => rp.days))).toHaveLength(98_820);
      expect(page.hasMore).toBe(false);
    }
    // years the cache does not hold, each computed
    const years = await Promise.all(
      clients.map((c, i) => c.getAvailability({ propertyCode: code, ...range(20 + i) }, { headers })),
    );
    for (const year of years) expect(year.roomTypes.flatMap((rt) => rt.days)).toHaveLength(100 * 366);
    expect(service.child.exitCode).toBeNull();
    expect((await fetch(`${service.base}/readyz`)).status).toBe(200);
  }, 120_000);
});
