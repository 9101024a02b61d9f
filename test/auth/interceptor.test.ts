import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { SignJWT, generateKeyPair } from "jose";
import { AuthTestService } from "../gen/hotelops/authtest/v1/auth_test_pb.js";
import { createGateway } from "../../src/gateway/index.ts";
import { createRecordingRouter } from "../../src/server/calls.ts";
import { createDispatcher } from "../../src/server/dispatch.ts";
import { createCallInterceptor } from "../../src/server/interceptors.ts";
import { listen, type Listener } from "../../src/server/listen.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { requirePrincipal, requireProperty } from "../../src/modules/auth/index.ts";
import { createAuthInterceptor } from "../../src/modules/auth/auth.interceptor.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// The real auth interceptor on a real socket in front of a test service with every rule shape, on the app's database.
const clock = new ManualClock("2026-11-22T09:00:00.000Z");
let app: TestApp;
let listener: Listener;
let base: string;
let propA: { id: string; code: string };
let propB: { id: string; code: string };

beforeAll(async () => {
  app = await startTestApp({ clock });
  const logger = pino({ level: "silent" });
  const auth = app.services.auth;
  const router = createRecordingRouter({
    interceptors: [
      createCallInterceptor(logger),
      createAuthInterceptor({ pool: app.db.pool, tokens: auth.tokens, clock }),
    ],
  });
  const echo = async (req: { propertyCode: string }, ctx: { values: import("@connectrpc/connect").ContextValues }) => {
    const p = requirePrincipal(ctx.values);
    const property = req.propertyCode === "" ? undefined : await requireProperty(app.db, p, req.propertyCode);
    return {
      kind: p.kind,
      subject: p.kind === "staff" ? p.userId : p.clientId,
      propertyId: property?.id ?? "",
      propertyIds: [...p.propertyIds],
    };
  };
  router.service(AuthTestService, {
    open: () => ({ kind: "anonymous" }),
    default: echo,
    needsReports: echo,
    partnerAvailability: echo,
    anyProperty: echo,
  });
  const gateway = createGateway({ ...router.direct, maxBodyBytes: 4096 });
  listener = await listen(createDispatcher({ handlers: router.handlers, gateway, ready: async () => true, logger }), {
    port: 0,
    host: "127.0.0.1",
  });
  base = `http://127.0.0.1:${listener.port}`;
  propA = await createTestProperty(app, { code: "AUTH-A" });
  propB = await createTestProperty(app, { code: "AUTH-B" });
});
afterAll(async () => {
  await listener?.close(100);
  await app?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;
const get = async (path: string, token?: string): Promise<{ status: number; body: Json; headers: Headers }> => {
  const res = await fetch(`${base}${path}`, { headers: token === undefined ? {} : bearer(token) });
  return { status: res.status, body: await res.json(), headers: res.headers };
};

describe("authentication", () => {
  it("lets public methods through without a token", async () => {
    expect((await get("/t/auth/open")).body.kind).toBe("anonymous");
  });

  it("401 with WWW-Authenticate: Bearer without a token, or with a malformed, forged or foreign token", async () => {
    const none = await get("/t/auth/default");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect(none.body.error.code).toBe("unauthorized");

    const basic = await fetch(`${base}/t/auth/default`, { headers: { authorization: "Basic YTpi" } });
    expect(basic.status).toBe(401);

    const garbage = await get("/t/auth/default", "not.a.jwt");
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');

    // Right shape and claims, but signed by a key the service does not know (same kid as the real one).
    const real = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    const kid = (await app.services.auth.keys.signingKey()).kid;
    const { privateKey } = await generateKeyPair("ES256");
    const now = Math.floor(clock.now().getTime() / 1000);
    const forged = await new SignJWT({ kind: "staff", sid: real.sessionId, pid: propA.id })
      .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
      .setSubject(real.userId)
      .setIssuer("hotelops")
      .setAudience("hotelops-api")
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(privateKey);
    expect((await get("/t/auth/default", forged)).status).toBe(401);
    expect((await get("/t/auth/default", real.accessToken)).status).toBe(200);
  });

  it("expires access tokens after 15 minutes (moved clock)", async () => {
    clock.set("2026-11-22T09:00:00.000Z");
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    clock.advance(14 * 60_000);
    expect((await get("/t/auth/default", s.accessToken)).status).toBe(200);
    clock.advance(60_000 + 1_000);
    const expired = await get("/t/auth/default", s.accessToken);
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("unauthorized");
    clock.set("2026-11-22T09:00:00.000Z");
  });

  it("rejects a revoked session at once, and a session past its 30 days", async () => {
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    expect((await get("/t/auth/default", s.accessToken)).status).toBe(200);
    await app.services.auth.sessions.revokeSession(s.sessionId);
    expect((await get("/t/auth/default", s.accessToken)).status).toBe(401);

    // A fresh token of a session that ran out (refresh does not extend it).
    const old = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    clock.advance(30 * 24 * 3600 * 1000 - 60_000);
    const refreshed = await app.services.auth.sessions.refreshStaffSession(old.refreshToken);
    expect((await get("/t/auth/default", refreshed.accessToken)).status).toBe(200);
    clock.advance(2 * 60_000);
    expect((await get("/t/auth/default", refreshed.accessToken)).status).toBe(401);
    await expect(app.services.auth.sessions.refreshStaffSession(refreshed.refreshToken)).rejects.toMatchObject({
      code: "unauthorized",
    });
    clock.set("2026-11-22T09:00:00.000Z");
  });

  it("rotates refresh tokens and revokes the session when a spent one is presented again", async () => {
    const sessions = app.services.auth.sessions;
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    const second = await sessions.refreshStaffSession(s.refreshToken);
    expect(second.refreshToken).not.toBe(s.refreshToken);
    expect(second.sessionId).toBe(s.sessionId);
    expect(second.expiresIn).toBe(900);
    await expect(sessions.refreshStaffSession(s.refreshToken)).rejects.toMatchObject({ code: "unauthorized" });
    // Reuse revoked the whole session: the latest tokens die too.
    expect((await get("/t/auth/default", second.accessToken)).status).toBe(401);
    await expect(sessions.refreshStaffSession(second.refreshToken)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(sessions.refreshStaffSession("rt_unknown")).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("staff tokens carry sub, kind, sid, pid and the role's permissions, nothing secret", async () => {
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    const payload = JSON.parse(Buffer.from(s.accessToken.split(".")[1]!, "base64url").toString()) as Json;
    expect(payload).toMatchObject({
      sub: s.userId,
      kind: "staff",
      sid: s.sessionId,
      pid: propA.id,
      perms: ["dashboard.view", "reservations.view", "folio.view"],
    });
    expect(payload.exp - payload.iat).toBe(900);
    expect(JSON.stringify(payload)).not.toMatch(/password|rt_/);
  });

  it("refreshes no more once the membership is gone", async () => {
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    await app.db.pool.query("update memberships set active = false where user_id = $1", [s.userId]);
    expect((await get("/t/auth/default", s.accessToken)).status).toBe(401);
    await expect(app.services.auth.sessions.refreshStaffSession(s.refreshToken)).rejects.toMatchObject({
      code: "unauthorized",
    });
    await app.services.auth.sessions.revokeSession("not-a-uuid");
  });

  it("refuses to open a session without an active membership", async () => {
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    await expect(
      app.services.auth.sessions.openStaffSession({ userId: s.userId, propertyId: propB.id }),
    ).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("accepts tokens of every non-retired key across a rotation, and none of a retired key", async () => {
    const keys = app.services.auth.keys;
    const before = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    const oldKid = (await keys.signingKey()).kid;
    const newKid = await keys.rotate();
    expect((await keys.signingKey()).kid).toBe(newKid);
    const after = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    expect(JSON.parse(Buffer.from(after.accessToken.split(".")[0]!, "base64url").toString()).kid).toBe(newKid);
    expect((await get("/t/auth/default", before.accessToken)).status).toBe(200);
    expect((await get("/t/auth/default", after.accessToken)).status).toBe(200);
    await keys.retire(oldKid);
    expect((await get("/t/auth/default", before.accessToken)).status).toBe(401);
    expect((await get("/t/auth/default", after.accessToken)).status).toBe(200);
  });
});

describe("authorization", () => {
  it("403 when the role lacks the permission; a role change acts on the next request", async () => {
    const viewer = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    const denied = await get("/t/auth/reports", viewer.accessToken);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("forbidden");
    await app.services.admin.createMembership({ email: viewer.email, propertyCode: propA.code, role: "accountant" });
    expect((await get("/t/auth/reports", viewer.accessToken)).status).toBe(200);
    const manager = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    expect((await get("/t/auth/reports", manager.accessToken)).body.kind).toBe("staff");
  });

  it("staff reach only their active property: another one is 404, never 403", async () => {
    const s = await createStaffSession(app, { propertyCode: propA.code, role: "manager" });
    const own = await get(`/t/auth/any/${propA.code}`, s.accessToken);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ kind: "staff", subject: s.userId, propertyId: propA.id, propertyIds: [propA.id] });
    expect((await get(`/t/auth/any/${propA.id}`, s.accessToken)).body.propertyId).toBe(propA.id);
    const other = await get(`/t/auth/any/${propB.code}`, s.accessToken);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
    expect((await get(`/t/auth/any/NO-SUCH`, s.accessToken)).status).toBe(404);
  });

  it("partners: scope enforced (403 insufficient_scope), property B is 404, staff-only methods 403", async () => {
    const partner = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [propA.code],
      scopes: ["availability.read"],
    });
    const ok = await get(`/t/auth/properties/${propA.code}/availability`, partner.accessToken);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ kind: "partner", subject: partner.clientId, propertyId: propA.id });
    const foreign = await get(`/t/auth/properties/${propB.code}/availability`, partner.accessToken);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");

    const mappingsOnly = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [propA.code],
      scopes: ["mappings.read"],
    });
    const noScope = await get(`/t/auth/properties/${propA.code}/availability`, mappingsOnly.accessToken);
    expect(noScope.status).toBe(403);
    expect(noScope.headers.get("www-authenticate")).toContain("insufficient_scope");

    expect((await get("/t/auth/default", partner.accessToken)).status).toBe(403);
    const staff = await get(
      `/t/auth/properties/${propA.code}/availability`,
      (await createStaffSession(app, { propertyCode: propA.code, role: "manager" })).accessToken,
    );
    expect(staff.status).toBe(403);
  });

  it("internal clients pass default rules; a disabled client is 401 at once", async () => {
    const internal = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
    const res = await get("/t/auth/default", internal.accessToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: "internal", subject: internal.clientId });
    await app.db.pool.query("update api_clients set active = false where id = $1", [internal.clientId]);
    expect((await get("/t/auth/default", internal.accessToken)).status).toBe(401);
  });

  it("works the same over gRPC: metadata bearer, Unauthenticated and PermissionDenied codes", async () => {
    const client = createClient(AuthTestService, createGrpcTransport({ baseUrl: base }));
    await expect(client.default({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    const viewer = await createStaffSession(app, { propertyCode: propA.code, role: "viewer" });
    const headers = bearer(viewer.accessToken);
    expect((await client.default({}, { headers })).kind).toBe("staff");
    const err = await client.needsReports({}, { headers }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    await expect(client.anyProperty({ propertyCode: propB.code }, { headers })).rejects.toMatchObject({
      code: Code.NotFound,
    });
  });
});
