import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService, ClientKind } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let adminToken: string;
beforeAll(async () => {
  app = await startTestApp();
  adminToken = (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken;
});
afterAll(async () => {
  await app?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;
const postJson = async (path: string, body: object, token = adminToken): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(token) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

describe("AdminService (internal clients with the admin scope)", () => {
  it("creates a property, user, membership and client over REST; the client secret only in the create response", async () => {
    const p = await postJson("/api/admin/v1/properties", {
      groupCode: "ADM",
      code: "ADM-1",
      name: "Admin Hotel",
      timeZone: "Europe/Istanbul",
      currency: "eur",
      businessDate: "2026-11-22",
    });
    expect(p.status).toBe(200);
    expect(p.body.property).toMatchObject({
      code: "ADM-1",
      groupCode: "ADM",
      currency: "EUR",
      amountScale: 100,
      businessDate: "2026-11-22",
      emailVerification: false,
      active: true,
    });
    expect(
      (
        await postJson("/api/admin/v1/properties", {
          groupCode: "ADM",
          code: "ADM-1",
          name: "x",
          timeZone: "Europe/Istanbul",
          currency: "EUR",
        })
      ).status,
    ).toBe(409);
    const bad = await postJson("/api/admin/v1/properties", {
      groupCode: "ADM",
      code: "ADM-2",
      name: "x",
      timeZone: "Mars/Base",
      currency: "EUR",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("timeZone");

    expect((await postJson("/api/admin/v1/users", { email: "a@adm.test", password: "short" })).status).toBe(400);
    const u = await postJson("/api/admin/v1/users", { email: "a@adm.test", name: "A", password: "long-enough" });
    expect(u.body.user).toMatchObject({ email: "a@adm.test", active: true });
    expect((await postJson("/api/admin/v1/users", { email: "A@ADM.test", password: "long-enough" })).status).toBe(409);
    const m = await postJson("/api/admin/v1/memberships", {
      email: "a@adm.test",
      propertyCode: "ADM-1",
      role: "accountant",
    });
    expect(m.body.membership).toMatchObject({ propertyCode: "ADM-1", role: "accountant", userId: u.body.user.id });

    const c = await postJson("/api/admin/v1/clients", {
      kind: "PARTNER",
      provider: "Booking",
      propertyCodes: ["ADM-1"],
      scopes: ["reservations.read"],
    });
    expect(c.status).toBe(200);
    expect(c.body.client).toMatchObject({
      kind: "PARTNER",
      provider: "booking",
      environment: "test",
      approvedAt: null,
      propertyCodes: ["ADM-1"],
    });
    expect(c.body.clientSecret).toMatch(/^cs_/);
    const approved = await postJson(`/api/admin/v1/clients/${c.body.client.clientId}/approve`, {});
    expect(approved.body.client.environment).toBe("live");
    expect(approved.body.client.approvedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(JSON.stringify(approved.body)).not.toContain(c.body.clientSecret);
  });

  it("switches the partner API and shows it on /api/v1/status", async () => {
    expect((await postJson("/api/admin/v1/platform/partner-api", { enabled: false })).body).toEqual({ enabled: false });
    expect(((await (await fetch(`${app.baseUrl}/api/v1/status`)).json()) as Json).partnerApi).toBe("disabled");
    await postJson("/api/admin/v1/platform/partner-api", { enabled: true });
  });

  it("over gRPC too; staff, partners and internal clients without the admin scope are refused", async () => {
    const grpc = createClient(AdminService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const res = await grpc.createClient(
      { kind: ClientKind.INTERNAL, provider: "ops", scopes: ["admin"] },
      { headers: bearer(adminToken) },
    );
    expect(res.client?.kind).toBe(ClientKind.INTERNAL);
    await expect(grpc.listClients({})).rejects.toMatchObject({ code: Code.Unauthenticated });

    const prop = await createTestProperty(app);
    const staff = await createStaffSession(app, { propertyCode: prop.code, role: "manager" });
    const partner = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [prop.code],
      scopes: ["mappings.read"],
    });
    const internalNoAdmin = await createTestClient(app, {
      kind: "internal",
      propertyCodes: [],
      scopes: ["mappings.read"],
    });
    for (const token of [staff.accessToken, partner.accessToken, internalNoAdmin.accessToken]) {
      await expect(grpc.listClients({}, { headers: bearer(token) })).rejects.toMatchObject({
        code: Code.PermissionDenied,
      });
      expect(
        (await postJson("/api/admin/v1/users", { email: "x@adm.test", password: "long-enough" }, token)).status,
      ).toBe(403);
    }
  });
});
