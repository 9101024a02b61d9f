// E-mail addresses have one form (NFC, lower-case domain): a composed and a decomposed "josé" are one account on
// every path that stores or compares an address (user create, membership, login) and every face (REST, Connect,
// gRPC); migration 0033 rewrites stored addresses and settles accounts that become one address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { migrate } from "../../src/db/orm.ts";
import { newId } from "../../src/lib/ids.ts";
import { normalizeEmail } from "../../src/lib/email-address.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";

let app: TestApp;
let admin: { headers: { authorization: string } };
let property: { id: string; code: string };
beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app);
  const client = await createTestClient(app, { kind: "internal", propertyCodes: [property.code], scopes: ["admin"] });
  admin = { headers: bearer(client.accessToken) };
});
afterAll(async () => {
  await app?.close();
});

const composed = (local: string) => local.normalize("NFC");
const decomposed = (local: string) => local.normalize("NFD");

describe("e-mail addresses in one form", () => {
  it("normalizeEmail: NFC throughout, lower-case domain, local part's case kept", () => {
    expect(decomposed("josé")).not.toBe(composed("josé"));
    expect(normalizeEmail(` ${decomposed("José")}@Exa\u0301mple.COM `)).toBe(
      `${composed("José")}@${composed("exámple")}.com`,
    );
    expect(normalizeEmail("no-at-sign")).toBe("no-at-sign");
  });

  it("REST, Connect and gRPC: a decomposed, composed or upper-case-domain twin is the same user (409, membership, login)", async () => {
    const local = `josé.${newId().slice(-6)}`;
    const res = await fetch(`${app.baseUrl}/api/admin/v1/users`, {
      method: "POST",
      headers: { ...admin.headers, "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({ email: `${decomposed(local)}@Example.TEST`, name: "Jose", password: "test-pass-2026" }),
    });
    expect(res.status).toBe(200);
    const created = ((await res.json()) as { user: { id: string; email: string } }).user;
    expect(created.email).toBe(`${composed(local)}@example.test`);
    const { rows } = await app.db.pool.query<{ email: string }>("select email from users where id = $1", [created.id]);
    expect(rows[0]!.email).toBe(`${composed(local)}@example.test`);

    const faces = {
      connect: createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      grpc: createGrpcTransport({ baseUrl: app.baseUrl }),
    };
    for (const [face, transport] of Object.entries(faces)) {
      const twin = await createClient(AdminService, transport)
        .createUser({ email: `${composed(local)}@EXAMPLE.test`, name: "Twin", password: "test-pass-2026" }, admin)
        .catch((e: unknown) => e);
      expect(twin, face).toBeInstanceOf(ConnectError);
      expect((twin as ConnectError).metadata.get("x-error-code"), face).toBe("conflict");
    }
    const again = await fetch(`${app.baseUrl}/api/admin/v1/users`, {
      method: "POST",
      headers: { ...admin.headers, "content-type": "application/json", "idempotency-key": newId() },
      body: JSON.stringify({ email: `${composed(local)}@example.test`, name: "Twin", password: "test-pass-2026" }),
    });
    expect(again.status).toBe(409);
    await again.arrayBuffer();

    // a membership named with another form reaches the same user
    const membership = await createClient(AdminService, faces.grpc).createMembership(
      { email: `${decomposed(local)}@EXAMPLE.TEST`, propertyCode: property.code, role: "viewer" },
      admin,
    );
    expect(membership.membership?.userId).toBe(created.id);

    // login with any form, on every face
    const login = {
      hotelCode: property.code,
      password: "test-pass-2026",
      deviceId: "d-email",
      deviceName: "test",
    };
    const restLogin = await fetch(`${app.baseUrl}/api/mobile/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...login, email: `${composed(local)}@EXAMPLE.TEST` }),
    });
    expect(restLogin.status).toBe(200);
    expect(((await restLogin.json()) as { profile: { userId: string } }).profile.userId).toBe(created.id);
    for (const [face, transport] of Object.entries(faces)) {
      const answer = await createClient(AuthService, transport).login({
        ...login,
        email: `${decomposed(local)}@example.TEST`,
      });
      expect(answer.profile?.userId, face).toBe(created.id);
    }
  });

  it("migration 0033 normalises stored addresses (of two that become one, the oldest keeps it, the later is deactivated) and starts each property's code counter after its own codes", async () => {
    const url = await freshDatabaseUrl();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      // the database as the previous version left it: addresses as typed, no per-property code counters
      await pool.query("drop table reservation_code_counters");
      await pool.query("delete from mikro_orm_migrations where name = '0033-property-codes-and-emails'");
      const users = {
        older: { id: newId(), email: `${decomposed("josé")}@example.test`, at: "2026-01-01T00:00:00Z" },
        later: { id: newId(), email: `${composed("josé")}@EXAMPLE.test`, at: "2026-02-01T00:00:00Z" },
        alone: { id: newId(), email: `Anna@Mail.${decomposed("Exämple")}`, at: "2026-03-01T00:00:00Z" },
        plain: { id: newId(), email: "plain@example.test", at: "2026-03-02T00:00:00Z" },
      };
      for (const u of Object.values(users))
        await pool.query(
          "insert into users (id, email, name, password_hash, created_at) values ($1, $2, 'x', 'x', $3)",
          [u.id, u.email, u.at],
        );
      // two properties with group-wide codes (R100002 and R100012 in one, R100003 in the other) and one with none
      const groupId = newId();
      await pool.query("insert into hotel_groups (id, code, name) values ($1, 'MIG', 'Migrated')", [groupId]);
      const properties = { ank: newId(), ist: newId(), empty: newId() };
      for (const [code, id] of Object.entries(properties))
        await pool.query(
          `insert into properties (id, group_id, code, name, time_zone, currency, business_date)
           values ($1, $2, $3, 'Migrated', 'Europe/Istanbul', 'TRY', '2026-01-01')`,
          [id, groupId, `MIG-${code.toUpperCase()}`],
        );
      for (const [propertyId, code, seq] of [
        [properties.ank, "R100002", 1],
        [properties.ist, "R100003", 1],
        [properties.ank, "R100012", 2],
      ] as const)
        await pool.query(
          `insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at, change_seq)
           values ($1, $2, $3, 'GUARANTEED', 'DIRECT', 'Old', '2026-05-01', '2026-05-02', 2, 0, 0, 'TRY', now(), now(), $4)`,
          [newId(), propertyId, code, seq],
        );
      await migrate(pool, url);
      const { rows } = await pool.query<{ id: string; email: string; active: boolean }>(
        "select id, email, active from users where id = any($1::uuid[])",
        [Object.values(users).map((u) => u.id)],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      expect(byId.get(users.older.id)).toMatchObject({ email: `${composed("josé")}@example.test`, active: true });
      expect(byId.get(users.later.id)).toMatchObject({
        email: `${composed("josé")}@example.test.duplicate-${users.later.id}.invalid`,
        active: false,
      });
      expect(byId.get(users.alone.id)).toMatchObject({ email: `Anna@mail.${composed("exämple")}`, active: true });
      expect(byId.get(users.plain.id)).toMatchObject({ email: "plain@example.test", active: true });
      // each property continues after its own highest code
      const counters = await pool.query<{ property_id: string; last_number: string }>(
        "select property_id, last_number::text from reservation_code_counters where property_id = any($1::uuid[])",
        [Object.values(properties)],
      );
      expect(Object.fromEntries(counters.rows.map((r) => [r.property_id, r.last_number]))).toEqual({
        [properties.ank]: "100012",
        [properties.ist]: "100003",
        [properties.empty]: "100000",
      });
    } finally {
      await pool.end();
    }
  });
});
