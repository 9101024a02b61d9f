// API clients have a count cap (MAX_CLIENTS_PER_PROPERTY active partner clients per property, MAX_INTERNAL_CLIENTS
// internal ones) and their lists page with a cursor and a documented maximum: the admin API's ListClients and the
// panel's ListApiClients, on REST, Connect and gRPC.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService, ClientKind } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { ApiAccessService } from "../../gen/hotelops/panel/v1/api_access_pb.js";
import { MAX_CLIENTS_PER_PROPERTY } from "../../src/modules/admin/admin.service.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let admin: string;
let staff: string;
let property: { id: string; code: string };

/** `n` active partner clients granted the property, written directly (a secret hash is not needed to list them). */
async function seedClients(propertyId: string, n: number): Promise<void> {
  const ids = Array.from({ length: n }, () => `cli_seed${randomBytes(8).toString("hex")}`);
  await app.db.pool.query(
    `insert into api_clients (id, kind, provider, secret_hash, created_at)
     select id, 'partner', 'seeded', 'x', now() - (ord || ' seconds')::interval from unnest($1::text[]) with ordinality as t(id, ord)`,
    [ids],
  );
  await app.db.pool.query(`insert into api_client_properties (client_id, property_id) select unnest($1::text[]), $2`, [
    ids,
    propertyId,
  ]);
}

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app);
  admin = (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken;
  staff = (await createStaffSession(app, { propertyCode: property.code, role: "manager" })).accessToken;
  // one short of the cap: the next create fills it
  await seedClients(property.id, MAX_CLIENTS_PER_PROPERTY - 1);
});
afterAll(async () => {
  await app?.close();
});

const transports = {
  connect: () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
  grpc: () => createGrpcTransport({ baseUrl: app.baseUrl }),
};

async function restPages(path: string, token: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor = "";
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${app.baseUrl}${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, {
      headers: bearer(token),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { clients: { clientId: string }[]; nextCursor: string };
    pages.push(body.clients.map((c) => c.clientId));
    if (body.nextCursor === "") return pages;
    cursor = body.nextCursor;
  }
  throw new Error("no last page");
}

describe("API client count cap", () => {
  it(`a property takes at most ${MAX_CLIENTS_PER_PROPERTY} active partner clients: 409 on REST, Connect and gRPC`, async () => {
    const body = { kind: "PARTNER", provider: "capped", propertyCodes: [property.code], scopes: ["availability.read"] };
    const last = await fetch(`${app.baseUrl}/api/admin/v1/clients`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(last.status).toBe(200);
    const over = await fetch(`${app.baseUrl}/api/admin/v1/clients`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(over.status).toBe(409);
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain(property.code);
    for (const make of Object.values(transports)) {
      const client = createClient(AdminService, make());
      const err = await client
        .createClient(
          {
            kind: ClientKind.PARTNER,
            provider: "capped",
            propertyCodes: [property.code],
            scopes: ["availability.read"],
          },
          { headers: bearer(admin) },
        )
        .then(() => undefined, ConnectError.from);
      expect(err?.code).toBe(Code.FailedPrecondition);
    }
  });
});

describe("client lists page with a cursor", () => {
  it("admin ListClients (REST): every client once over pages of 7, newest first; 201 and a bad cursor are 400", async () => {
    const pages = await restPages("/api/admin/v1/clients", admin, 7);
    const ids = pages.flat();
    const { rows } = await app.db.pool.query<{ n: number }>("select count(*)::int as n from api_clients");
    expect(ids).toHaveLength(rows[0]!.n);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
    expect((await fetch(`${app.baseUrl}/api/admin/v1/clients?limit=201`, { headers: bearer(admin) })).status).toBe(400);
    const bad = await fetch(`${app.baseUrl}/api/admin/v1/clients?cursor=nonsense`, { headers: bearer(admin) });
    expect(bad.status).toBe(400);
    const first = (await (await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(admin) })).json()) as {
      clients: unknown[];
      nextCursor: string;
    };
    expect(first.clients).toHaveLength(50);
    expect(first.nextCursor).not.toBe("");
  });

  it.each(Object.keys(transports) as (keyof typeof transports)[])(
    "admin ListClients (%s): the same pages; limit 201 is INVALID_ARGUMENT",
    async (face) => {
      const client = createClient(AdminService, transports[face]());
      const ids: string[] = [];
      let cursor = "";
      do {
        const page = await client.listClients({ cursor, limit: 20 }, { headers: bearer(admin) });
        ids.push(...page.clients.map((c) => c.clientId));
        cursor = page.nextCursor;
      } while (cursor !== "");
      expect(ids).toEqual((await restPages("/api/admin/v1/clients", admin, 200)).flat());
      const err = await client
        .listClients({ limit: 201 }, { headers: bearer(admin) })
        .then(() => undefined, ConnectError.from);
      expect(err?.code).toBe(Code.InvalidArgument);
    },
  );

  it("panel ListApiClients: pages of the property's partner clients on REST, Connect and gRPC", async () => {
    const rest = (await restPages("/api/panel/v1/api-clients", staff, 9)).flat();
    expect(rest).toHaveLength(MAX_CLIENTS_PER_PROPERTY);
    for (const make of Object.values(transports)) {
      const client = createClient(ApiAccessService, make());
      const ids: string[] = [];
      let cursor = "";
      do {
        const page = await client.listApiClients({ cursor, limit: 9 }, { headers: bearer(staff) });
        expect(page.clients.length).toBeLessThanOrEqual(9);
        ids.push(...page.clients.map((c) => c.clientId));
        cursor = page.nextCursor;
      } while (cursor !== "");
      expect(ids).toEqual(rest);
    }
    const err = await createClient(ApiAccessService, transports.grpc())
      .listApiClients({ limit: 201 }, { headers: bearer(staff) })
      .then(() => undefined, ConnectError.from);
    expect(err?.code).toBe(Code.InvalidArgument);
  });
});
