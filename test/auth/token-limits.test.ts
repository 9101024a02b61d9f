import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oauth from "oauth4webapi";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";

// The token endpoint has limits of its own (fault 6): a channel manager with many hotel clients behind one egress
// IP must not be throttled per IP, nor spend the staff login budget of that IP. Production-like limits here:
// 30 tokens per client per minute, 20 failed authentications per IP and per client id, 10 staff logins per IP.
// The proxy is trusted so each test speaks from its own client IP (X-Forwarded-For). The clock stands still, so
// no test straddles two one-minute windows.

let app: TestApp;
let propertyCode: string;
const insecure = { [oauth.allowInsecureRequests]: true };
let ipCounter = 10;
const freshIp = () => `203.0.113.${ipCounter++}`;

beforeAll(async () => {
  app = await startTestApp({
    clock: new ManualClock("2027-01-10T10:00:05.000Z"),
    env: {
      RATE_LIMIT_AUTH_PER_MINUTE: "10",
      RATE_LIMIT_TOKEN_PER_MINUTE: "30",
      RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: "20",
      TRUSTED_PROXIES: "127.0.0.1,::1",
    },
  });
  propertyCode = (await createTestProperty(app, { code: "TLIM-1" })).code;
});
afterAll(async () => {
  await app?.close();
});

const client = () =>
  createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [propertyCode],
    scopes: ["availability.read"],
  });
const as = (): oauth.AuthorizationServer => ({
  issuer: app.baseUrl,
  token_endpoint: `${app.baseUrl}/api/v1/oauth/token`,
});

/** One token request through oauth4webapi, from `ip`: the token, or the library's error. */
async function tokenFor(id: string, secret: string, ip: string): Promise<{ ok: true } | { ok: false; err: unknown }> {
  try {
    const res = await oauth.clientCredentialsGrantRequest(
      as(),
      { client_id: id },
      oauth.ClientSecretBasic(secret),
      new URLSearchParams(),
      { ...insecure, headers: { "x-forwarded-for": ip } },
    );
    await oauth.processClientCredentialsResponse(as(), { client_id: id }, res);
    return { ok: true };
  } catch (err) {
    return { ok: false, err };
  }
}

describe("token endpoint limits", () => {
  it("twelve token calls of one partner pass, and the same address's staff login is not spent by them", async () => {
    const ip = freshIp();
    const c = await client();
    const results = [];
    for (let i = 0; i < 12; i++) results.push(await tokenFor(c.clientId, c.clientSecret, ip));
    expect(results.filter((r) => r.ok)).toHaveLength(12);
    const login = await fetch(`${app.baseUrl}/api/mobile/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": ip },
      body: JSON.stringify({
        hotelCode: "NOPE",
        email: "nobody@test.test",
        password: "wrong-pass-2026",
        deviceId: "d",
        deviceName: "phone",
      }),
    });
    expect(login.status).toBe(401);
  });

  it("hundreds of clients behind one IP each get their own budget", async () => {
    const ip = freshIp();
    const clients = await Promise.all(Array.from({ length: 12 }, client));
    for (const c of clients)
      for (let i = 0; i < 3; i++) expect((await tokenFor(c.clientId, c.clientSecret, ip)).ok).toBe(true);
  });

  it("a client over its own limit (api_clients override) gets 429 + Retry-After and a retryable OAuth error, others do not", async () => {
    const ip = freshIp();
    const limited = await client();
    const other = await client();
    await app.db.pool.query("update api_clients set token_requests_per_minute = 3 where id = $1", [limited.clientId]);
    for (let i = 0; i < 3; i++) expect((await tokenFor(limited.clientId, limited.clientSecret, ip)).ok).toBe(true);
    const over = await tokenFor(limited.clientId, limited.clientSecret, ip);
    expect(over.ok).toBe(false);
    const err = (over as { err: oauth.ResponseBodyError }).err;
    expect(err).toBeInstanceOf(oauth.ResponseBodyError);
    expect(err.status).toBe(429);
    expect(err.error).toBe("temporarily_unavailable");
    expect(err.error).not.toBe("invalid_request");
    expect(Number(err.response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(err.response.headers.get("ratelimit-limit")).toBe("3");
    expect((await tokenFor(other.clientId, other.clientSecret, ip)).ok).toBe(true);
  });

  it("counts failed authentications per client id: a guessed-at client is refused even with its right secret", async () => {
    const target = await client();
    for (let i = 0; i < 20; i++) {
      const r = await tokenFor(target.clientId, "wrong-secret", freshIp());
      expect(r.ok).toBe(false);
    }
    const refused = await tokenFor(target.clientId, target.clientSecret, freshIp());
    expect(refused.ok).toBe(false);
    expect((refused as { err: oauth.ResponseBodyError }).err.status).toBe(429);
  });

  it("counts failed authentications per IP, whatever client ids they name; other IPs are not affected", async () => {
    const ip = freshIp();
    for (let i = 0; i < 20; i++) expect((await tokenFor(`unknown-${i}`, "wrong", ip)).ok).toBe(false);
    const good = await client();
    const blocked = await tokenFor(good.clientId, good.clientSecret, ip);
    expect((blocked as { err: oauth.ResponseBodyError }).err.status).toBe(429);
    expect((await tokenFor(good.clientId, good.clientSecret, freshIp())).ok).toBe(true);
  });

  it("holds on Connect and gRPC too: ResourceExhausted with the RFC code in x-oauth-error", async () => {
    const limited = await client();
    await app.db.pool.query("update api_clients set token_requests_per_minute = 1 where id = $1", [limited.clientId]);
    const basic = `Basic ${Buffer.from(`${limited.clientId}:${limited.clientSecret}`).toString("base64")}`;
    for (const transport of [
      createGrpcTransport({ baseUrl: app.baseUrl }),
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
    ]) {
      await app.db.pool.query("delete from rate_limits where bucket like 'token-client:%'");
      const auth = createClient(AuthService, transport);
      const headers = { authorization: basic, "x-forwarded-for": freshIp() };
      expect((await auth.createToken({ grantType: "client_credentials" }, { headers })).accessToken).not.toBe("");
      const err = await auth.createToken({ grantType: "client_credentials" }, { headers }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
      expect((err as ConnectError).metadata.get("x-oauth-error")).toBe("temporarily_unavailable");
    }
  });
});
