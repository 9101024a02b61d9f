import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient } from "../helpers/auth.ts";

// The platform interceptors inside the real service, behind the real auth module (internal admin clients).
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const property = (code: string) => ({
  groupCode: "PLAT",
  code,
  name: `Hotel ${code}`,
  timeZone: "Europe/Istanbul",
  currency: "TRY",
  amountScale: 100,
});
const createProperty = (token: string, key: string, body: object) =>
  fetch(`${app.baseUrl}/api/admin/v1/properties`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key, ...bearer(token) },
    body: JSON.stringify(body),
  });
const count = async (code: string) =>
  (await app.db.pool.query<{ n: number }>("select count(*)::int as n from properties where code = $1", [code])).rows[0]
    ?.n;

describe("idempotency in the service", () => {
  it("replays an admin write for its client byte for byte, also to gRPC, and creates one property", async () => {
    const admin = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
    const first = await createProperty(admin.accessToken, "prop-1", property("PLAT-A"));
    expect(first.status).toBe(200);
    const body = await first.text();
    const again = await createProperty(admin.accessToken, "prop-1", property("PLAT-A"));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(await again.text()).toBe(body);

    const client = createClient(AdminService, createGrpcTransport({ baseUrl: app.baseUrl }));
    let replayed: string | null = null;
    const res = await client.createProperty(property("PLAT-A"), {
      headers: { "idempotency-key": "prop-1", ...bearer(admin.accessToken) },
      onHeader: (h) => (replayed = h.get("idempotency-replayed")),
    });
    expect(replayed).toBe("true");
    expect(res.property?.code).toBe("PLAT-A");
    expect(await count("PLAT-A")).toBe(1);

    const conflict = await createProperty(admin.accessToken, "prop-1", property("PLAT-B"));
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe("idempotency_conflict");
    expect(await count("PLAT-B")).toBe(0);
  });

  it("keeps keys per client and replays a stored 409 of the service", async () => {
    const other = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
    // The same key from another client is that client's own request: it runs, and the taken code is a 409.
    const taken = await createProperty(other.accessToken, "prop-1", property("PLAT-A"));
    expect(taken.status).toBe(409);
    expect(taken.headers.get("idempotency-replayed")).toBeNull();
    const replay = await createProperty(other.accessToken, "prop-1", property("PLAT-A"));
    expect(replay.status).toBe(409);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
  });
});

describe("rate limits in the service", () => {
  it("limits an API client by its rate_limit_per_minute across REST and gRPC", async () => {
    const admin = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
    await app.db.pool.query("update api_clients set rate_limit_per_minute = 3 where id = $1", [admin.clientId]);
    const list = () => fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(admin.accessToken) });
    const first = await list();
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("3");
    expect(first.headers.get("ratelimit-remaining")).toBe("2");
    const client = createClient(AdminService, createGrpcTransport({ baseUrl: app.baseUrl }));
    await client.listClients({}, { headers: bearer(admin.accessToken) });
    expect((await list()).headers.get("ratelimit-remaining")).toBe("0");
    const over = await list();
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const err = await client
      .listClients({}, { headers: bearer(admin.accessToken) })
      .catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
  });
});
