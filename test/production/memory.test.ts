import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
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
  const inventory = createInventoryService({ transact: admin.deps.transact, pool: admin.db.pool, clock: admin.clock });
  const types: string[] = [];
  for (let i = 0; i < 27; i++) {
    const rt = await inventory.createRoomType(property.id, { code: `RT${i}`, name: `Type ${i}`, maxOccupancy: 2 });
    await inventory.createRoom(property.id, { number: `${i}01`, roomTypeId: rt.id });
    types.push(rt.id);
  }
  const plans: string[] = [];
  for (let i = 0; i < 10; i++)
    plans.push(
      (
        await inventory.createRatePlan(property.id, {
          code: `P${i}`,
          name: `P${i}`,
          boardType: "ROOM_ONLY",
          roomTypeIds: types,
        })
      ).id,
    );
  await admin.db.pool.query(
    `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select $1, rp, rt, d::date, 10000 + extract(doy from d)::int
     from unnest($2::uuid[]) rp cross join unnest($3::uuid[]) rt
     cross join generate_series('2027-01-01'::date, '2028-12-31'::date, interval '1 day') d`,
    [property.id, plans, types],
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
