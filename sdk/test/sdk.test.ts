// The SDK against the real service (startTestApp): every transport, partner tokens, staff sessions, REST.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readOutbox } from "../../src/lib/mail.ts";
import { createClient } from "@connectrpc/connect";
import { startTestApp, type TestApp } from "../../test/helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../../test/helpers/auth.ts";
import * as browserSdk from "../src/browser.ts";
import {
  Code,
  ConnectivityService,
  StatusService,
  WebhookService,
  AuthService,
  createClientCredentials,
  createHotelOpsClient,
  createHotelOpsTransport,
  createMobileSession,
  createRestClient,
  services,
  HotelOpsError,
  loginStaff,
  verifyStaffLogin,
  SessionEndedError,
} from "../src/index.ts";

let app: TestApp;
const dataDir = mkdtempSync(join(tmpdir(), "hotelops-sdk-"));
beforeAll(async () => {
  app = await startTestApp({ env: { DATA_DIR: dataDir } });
});
afterAll(async () => {
  await app?.close();
});

const expected = { status: "operational", apiVersion: "v1", partnerApi: "enabled", partnerApiRelease: "v1 beta" };

describe("SDK against the running service", () => {
  it("reads the status over Connect (binary, JSON, HTTP/1.1 and 2), gRPC and gRPC-Web", async () => {
    const variants = [
      { transport: "connect" },
      { transport: "connect", useJson: true },
      { transport: "connect", httpVersion: "2" },
      { transport: "grpc" },
      { transport: "grpc-web" },
      { transport: "grpc-web", httpVersion: "2" },
    ] as const;
    for (const v of variants) {
      const client = createHotelOpsClient(StatusService, { baseUrl: app.baseUrl, ...v });
      const res = await client.getStatus({});
      expect(
        {
          status: res.status,
          apiVersion: res.apiVersion,
          partnerApi: res.partnerApi,
          partnerApiRelease: res.partnerApiRelease,
        },
        JSON.stringify(v),
      ).toEqual(expected);
    }
  });

  it("reads the status from the browser entry (fetch-based Connect and gRPC-Web) and over REST", async () => {
    for (const transport of ["connect", "grpc-web"] as const) {
      const res = await browserSdk
        .createHotelOpsClient(browserSdk.StatusService, { baseUrl: app.baseUrl, transport })
        .getStatus({});
      expect(res.status).toBe("operational");
    }
    expect(() => browserSdk.createHotelOpsClient(StatusService, { baseUrl: app.baseUrl, transport: "grpc" })).toThrow(
      /grpc-web/,
    );
    expect(await createRestClient({ baseUrl: app.baseUrl }).get("/api/v1/status")).toEqual(expected);
  });

  it("lists every service of the contract, with typed methods from the descriptors", () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining([
        "hotelops.status.v1.StatusService",
        "hotelops.connectivity.v1.ConnectivityService",
        "hotelops.auth.v1.AuthService",
      ]),
    );
    const transport = createHotelOpsTransport({ baseUrl: app.baseUrl });
    for (const service of Object.values(services)) {
      const client = createClient(service, transport) as Record<string, unknown>;
      for (const method of service.methods)
        expect(typeof client[method.localName], `${service.typeName}/${method.name}`).toBe("function");
    }
  });

  it("partner: client-credentials tokens from the real token endpoint, used over gRPC, Connect and REST", async () => {
    const property = await createTestProperty(app);
    const { clientId, clientSecret } = await createTestClient(app, {
      propertyCodes: [property.code],
      scopes: ["availability.read", "mappings.read"],
    });
    const creds = createClientCredentials({ baseUrl: app.baseUrl, clientId, clientSecret });
    for (const transport of ["grpc", "connect"] as const) {
      const caps = await createHotelOpsClient(ConnectivityService, {
        baseUrl: app.baseUrl,
        transport,
        auth: creds,
      }).getCapabilities({});
      expect(caps.clientId).toBe(clientId);
      expect(caps.properties.map((p) => p.code)).toEqual([property.code]);
    }
    const rest = createRestClient({ baseUrl: app.baseUrl, auth: creds });
    const caps = await rest.get<{ clientId: string; scopes: string[] }>("/api/v1/capabilities");
    expect(caps.clientId).toBe(clientId);
    expect(caps.scopes.sort()).toEqual(["availability.read", "mappings.read"]);

    // bad input and refusals come back as typed errors
    const wrong = createClientCredentials({ baseUrl: app.baseUrl, clientId, clientSecret: `${clientSecret}x` });
    await expect(wrong.accessToken()).rejects.toMatchObject({ status: 401, code: "invalid_client" });
    const anonymous = createHotelOpsClient(ConnectivityService, { baseUrl: app.baseUrl, transport: "grpc" });
    await expect(anonymous.getCapabilities({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    const other = await createTestProperty(app);
    const err = await rest.get(`/api/v1/properties/${other.code}/mappings`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HotelOpsError);
    expect((err as HotelOpsError).status).toBeGreaterThanOrEqual(403);
    expect((err as HotelOpsError).requestId).toBeTruthy();
  });

  it("staff: a mobile session refreshes through the real endpoint once for concurrent callers (a second refresh would revoke it)", async () => {
    const property = await createTestProperty(app);
    const staff = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const session = createMobileSession({
      baseUrl: app.baseUrl,
      tokens: { accessToken: staff.accessToken, refreshToken: staff.refreshToken, expiresIn: 0 },
    });
    const panel = createHotelOpsClient(WebhookService, { baseUrl: app.baseUrl, auth: session });
    const lists = await Promise.all(Array.from({ length: 8 }, () => panel.listWebhookEndpoints({})));
    expect(lists.every((l) => l.endpoints.length === 0)).toBe(true);
    const pair = session.tokens()!;
    expect(pair.refreshToken).not.toBe(staff.refreshToken);
    // the rotated pair still works (reuse detection would have revoked the session after a double refresh)
    const rest = createRestClient({ baseUrl: app.baseUrl, auth: session });
    expect(await rest.get("/api/panel/v1/webhook-endpoints")).toMatchObject({ endpoints: [] });
    expect(session.tokens()).toBe(pair);

    // switching property re-issues the pair; the new one works, a property out of reach leaves it in place
    const second = await createTestProperty(app);
    await createStaffSession(app, { propertyCode: second.code, role: "viewer", email: staff.email });
    const profile = await session.switchProperty(second.id);
    expect(profile.activePropertyId).toBe(second.id);
    const switched = session.tokens()!;
    expect(switched.refreshToken).not.toBe(pair.refreshToken);
    expect(await rest.get("/api/mobile/v1/dashboard")).toMatchObject({ currency: "TRY" });
    await expect(session.switchProperty((await createTestProperty(app)).id)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect(session.tokens()).toBe(switched);
    const current = switched;

    // logout over gRPC ends the session; the next refresh is refused and reported as the end of the session
    await createHotelOpsClient(AuthService, { baseUrl: app.baseUrl, transport: "grpc", auth: session }).logout({});
    await expect(session.refresh(current.accessToken)).rejects.toMatchObject({ name: "SessionEndedError" });
    expect(session.tokens()).toBeUndefined();
  });

  it("staff: a refresh retried after its answer was lost keeps the session (the SDK sends the login's deviceId)", async () => {
    const property = await createTestProperty(app);
    const staff = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    let lose = 0;
    const refreshBodies: unknown[] = [];
    // the server rotates the pair, then the connection drops before the answer arrives (a phone changing networks)
    const lossyFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith("/api/mobile/v1/auth/refresh")) {
        refreshBodies.push(JSON.parse(String(init?.body)));
        if (lose-- > 0) {
          await res.arrayBuffer();
          throw new TypeError("fetch failed");
        }
      }
      return res;
    };
    const ended: string[] = [];
    const signedIn = await loginStaff({
      baseUrl: app.baseUrl,
      fetch: lossyFetch,
      deviceId: "7d4e8b1a-0000-4000-8000-0000000000bb",
      deviceName: "SDK retry test",
      hotelCode: property.code,
      email: staff.email,
      password: "test-pass-2026",
      onSessionEnded: () => ended.push("ended"),
    });
    if (signedIn.kind !== "session") throw new Error("expected a session");
    const { session } = signedIn;
    const first = session.tokens()!;
    lose = 1;
    await expect(session.refresh(first.accessToken)).rejects.toThrow(/fetch failed/);
    expect(session.tokens()).toBe(first); // the lost answer changed nothing on this side
    const access = await session.refresh(first.accessToken);
    expect(access).not.toBe(first.accessToken);
    expect(ended).toEqual([]);
    expect(refreshBodies).toEqual([
      { refreshToken: first.refreshToken, deviceId: "7d4e8b1a-0000-4000-8000-0000000000bb" },
      { refreshToken: first.refreshToken, deviceId: "7d4e8b1a-0000-4000-8000-0000000000bb" },
    ]);
    // the pair the retry got is alive on the server: it reads, and it refreshes again
    const rest = createRestClient({ baseUrl: app.baseUrl, auth: session });
    expect(await rest.get("/api/mobile/v1/dashboard")).toMatchObject({ currency: "TRY" });
    const retried = session.tokens()!;
    expect(await session.refresh(retried.accessToken)).not.toBe(retried.accessToken);
    expect(await rest.get("/api/mobile/v1/dashboard")).toMatchObject({ currency: "TRY" });
    expect(ended).toEqual([]);
  });

  it("staff login helpers: a session at once, or a challenge answered with the e-mailed code; logout ends the session on the server", async () => {
    const open = await createTestProperty(app);
    const verified = await createTestProperty(app, { emailVerification: true });
    const staff = await createStaffSession(app, { propertyCode: open.code, role: "manager" });
    await createStaffSession(app, { propertyCode: verified.code, role: "manager", email: staff.email });
    const device = { deviceId: "2f1c4f5e-0000-4000-8000-0000000000aa", deviceName: "SDK test" };
    const ended: string[] = [];
    const common = { baseUrl: app.baseUrl, ...device, onSessionEnded: () => ended.push("ended") };

    const direct = await loginStaff({
      ...common,
      hotelCode: open.code,
      email: staff.email,
      password: "test-pass-2026",
    });
    if (direct.kind !== "session") throw new Error("expected a session");
    expect(direct.profile.activePropertyId).toBe(open.id);
    expect(
      await createRestClient({ baseUrl: app.baseUrl, auth: direct.session }).get("/api/mobile/v1/dashboard"),
    ).toMatchObject({ currency: "TRY" });
    const pair = direct.session.tokens()!;
    await direct.session.logout();
    expect(direct.session.tokens()).toBeUndefined();
    // the server ended it: the old pair's refresh token is refused
    const stale = createMobileSession({ baseUrl: app.baseUrl, tokens: pair });
    await expect(stale.refresh(pair.accessToken)).rejects.toBeInstanceOf(SessionEndedError);

    const challenged = await loginStaff({
      ...common,
      hotelCode: verified.code,
      email: staff.email,
      password: "test-pass-2026",
    });
    if (challenged.kind !== "challenge") throw new Error("expected a challenge");
    expect(challenged.maskedEmail).toContain("*");
    expect(Date.parse(challenged.expiresAt)).toBeGreaterThan(Date.now());
    const mail = (await readOutbox(dataDir)).filter((m) => m.to === staff.email).at(-1);
    const code = /\b(\d{6})\b/.exec(mail?.text ?? "")?.[1] ?? "";
    const signedIn = await verifyStaffLogin({ ...common, challengeId: challenged.challengeId, code });
    expect(signedIn.profile.activePropertyId).toBe(verified.id);
    expect(
      (
        await createHotelOpsClient(WebhookService, {
          baseUrl: app.baseUrl,
          auth: signedIn.session,
        }).listWebhookEndpoints({})
      ).endpoints,
    ).toEqual([]);

    await expect(
      loginStaff({ ...common, hotelCode: open.code, email: staff.email, password: "wrong" }),
    ).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect(ended).toEqual([]);
  });
});
