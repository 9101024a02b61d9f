import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oauth from "oauth4webapi";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

const clock = new ManualClock("2026-11-22T09:00:00.000Z");
let app: TestApp;
let tokenUrl: string;
let property: { id: string; code: string };
let partner: { clientId: string; clientSecret: string };
let internal: { clientId: string; clientSecret: string };

beforeAll(async () => {
  app = await startTestApp({ clock });
  tokenUrl = `${app.baseUrl}/api/v1/oauth/token`;
  property = await createTestProperty(app, { code: "TOK-A" });
  partner = await createTestClient(app, {
    kind: "partner",
    provider: "channex",
    propertyCodes: [property.code],
    scopes: ["availability.read", "reservations.read", "mappings.read"],
  });
  internal = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
});
afterAll(async () => {
  await app?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;
const as = (): oauth.AuthorizationServer => ({ issuer: app.baseUrl, token_endpoint: tokenUrl });
const insecure = { [oauth.allowInsecureRequests]: true };
const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const post = async (
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> => {
  const res = await fetch(tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
};

describe("POST /api/v1/oauth/token with a real OAuth client (oauth4webapi)", () => {
  it("issues a 15-minute Bearer token with client_secret_basic, all scopes by default", async () => {
    const res = await oauth.clientCredentialsGrantRequest(
      as(),
      { client_id: partner.clientId },
      oauth.ClientSecretBasic(partner.clientSecret),
      new URLSearchParams(),
      insecure,
    );
    expect(res.headers.get("cache-control")).toBe("no-store");
    const raw = (await res.clone().json()) as Json;
    expect(Object.keys(raw).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    const token = await oauth.processClientCredentialsResponse(as(), { client_id: partner.clientId }, res);
    expect(token.token_type).toBe("bearer");
    expect(raw.token_type).toBe("Bearer");
    expect(token.expires_in).toBe(900);
    expect(token.scope).toBe("availability.read reservations.read mappings.read");
    const [header, payload] = token.access_token
      .split(".")
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, "base64url").toString()) as Json);
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(typeof header.kid).toBe("string");
    expect(payload).toMatchObject({
      sub: partner.clientId,
      kind: "partner",
      scope: "availability.read reservations.read mappings.read",
    });
    expect(payload.exp - payload.iat).toBe(900);
    expect(JSON.stringify(payload)).not.toContain(partner.clientSecret);
  });

  it("grants a requested subset of scopes, with client_secret_post too", async () => {
    const res = await oauth.clientCredentialsGrantRequest(
      as(),
      { client_id: partner.clientId },
      oauth.ClientSecretPost(partner.clientSecret),
      new URLSearchParams({ scope: "mappings.read" }),
      insecure,
    );
    const token = await oauth.processClientCredentialsResponse(as(), { client_id: partner.clientId }, res);
    expect(token.scope).toBe("mappings.read");
  });

  it("surfaces invalid_client to the OAuth library for a wrong secret", async () => {
    const res = await oauth.clientCredentialsGrantRequest(
      as(),
      { client_id: partner.clientId },
      oauth.ClientSecretBasic("wrong"),
      new URLSearchParams(),
      insecure,
    );
    expect(res.status).toBe(401);
    const err = await oauth
      .processClientCredentialsResponse(as(), { client_id: partner.clientId }, res)
      .catch((e: unknown) => e);
    // A 401 with a challenge: the library reports the Basic challenge, the body still says invalid_client.
    expect(err).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((err as oauth.WWWAuthenticateChallengeError).cause[0]?.scheme).toBe("basic");
    expect(((await (err as oauth.WWWAuthenticateChallengeError).response.json()) as Json).error).toBe("invalid_client");
  });

  it("the token works on the API and stops after 15 minutes; a partner token cannot reach internal RPCs", async () => {
    clock.set("2026-11-22T09:00:00.000Z");
    const got = await post("grant_type=client_credentials", {
      authorization: basic(internal.clientId, internal.clientSecret),
    });
    expect(got.status).toBe(200);
    const list = await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(got.body.access_token) });
    expect(list.status).toBe(200);
    const clients = ((await list.json()) as Json).clients as Json[];
    expect(clients.map((c) => c.clientId)).toEqual(expect.arrayContaining([partner.clientId, internal.clientId]));
    expect(JSON.stringify(clients)).not.toContain("secret");

    const partnerToken = (
      await post("grant_type=client_credentials", { authorization: basic(partner.clientId, partner.clientSecret) })
    ).body.access_token as string;
    expect((await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(partnerToken) })).status).toBe(403);

    clock.advance(900_000 + 1_000);
    const late = await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(got.body.access_token) });
    expect(late.status).toBe(401);
    expect(late.headers.get("www-authenticate")).toContain("Bearer");
    clock.set("2026-11-22T09:00:00.000Z");
  });
});

describe("RFC 6749 section 5.2 errors", () => {
  const expectOAuthError = (
    res: { status: number; body: Json; headers: Headers },
    status: number,
    error: string,
  ): void => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
    expect(res.headers.get("cache-control")).toBe("no-store");
  };

  it("invalid_client (401, WWW-Authenticate: Basic): wrong secret, unknown client, no credentials, other scheme, malformed", async () => {
    for (const headers of [
      { authorization: basic(partner.clientId, "nope") },
      { authorization: basic("cli_doesnotexist", partner.clientSecret) },
      {},
      { authorization: "Bearer abc" },
      { authorization: "Basic !!!" },
      { authorization: `Basic ${Buffer.from("no-colon").toString("base64")}` },
    ]) {
      const res = await post("grant_type=client_credentials", headers);
      expectOAuthError(res, 401, "invalid_client");
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic /);
    }
    expectOAuthError(
      await post(`grant_type=client_credentials&client_id=${partner.clientId}&client_secret=bad`),
      401,
      "invalid_client",
    );
    expectOAuthError(await post(`grant_type=client_credentials&client_id=${partner.clientId}`), 401, "invalid_client");
  });

  it("invalid_request (400): both authentication methods, missing grant_type, JSON body", async () => {
    const both = await post(
      `grant_type=client_credentials&client_id=${partner.clientId}&client_secret=${partner.clientSecret}`,
      { authorization: basic(partner.clientId, partner.clientSecret) },
    );
    expectOAuthError(both, 400, "invalid_request");
    expectOAuthError(
      await post("scope=mappings.read", { authorization: basic(partner.clientId, partner.clientSecret) }),
      400,
      "invalid_request",
    );
    const json = await fetch(tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: basic(partner.clientId, partner.clientSecret) },
      body: JSON.stringify({ grant_type: "client_credentials" }),
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as Json).error).toBe("invalid_request");
  });

  it("unsupported_grant_type, invalid_scope and invalid_grant (400)", async () => {
    const auth = { authorization: basic(partner.clientId, partner.clientSecret) };
    expectOAuthError(await post("grant_type=password", auth), 400, "unsupported_grant_type");
    expectOAuthError(await post("grant_type=authorization_code", auth), 400, "unsupported_grant_type");
    expectOAuthError(await post("grant_type=client_credentials&scope=reservations.write", auth), 400, "invalid_scope");
    expectOAuthError(
      await post("grant_type=client_credentials&scope=mappings.read%20admin", auth),
      400,
      "invalid_scope",
    );

    const lonely = await createTestProperty(app, { code: "TOK-GONE" });
    const orphan = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [lonely.code],
      scopes: ["mappings.read"],
    });
    await app.db.pool.query("update properties set active = false where id = $1", [lonely.id]);
    expectOAuthError(
      await post("grant_type=client_credentials", { authorization: basic(orphan.clientId, orphan.clientSecret) }),
      400,
      "invalid_grant",
    );
  });

  it("a disabled client is invalid_client", async () => {
    const c = await createTestClient(app, {
      kind: "partner",
      propertyCodes: [property.code],
      scopes: ["mappings.read"],
    });
    await app.db.pool.query("update api_clients set active = false where id = $1", [c.clientId]);
    expectOAuthError(
      await post("grant_type=client_credentials", { authorization: basic(c.clientId, c.clientSecret) }),
      401,
      "invalid_client",
    );
  });
});

describe("CreateToken over gRPC", () => {
  it("takes Basic credentials as metadata and reports the RFC code in x-oauth-error", async () => {
    const client = createClient(AuthService, createGrpcTransport({ baseUrl: app.baseUrl }));
    const ok = await client.createToken(
      { grantType: "client_credentials", scope: "mappings.read" },
      { headers: { authorization: basic(partner.clientId, partner.clientSecret) } },
    );
    expect(ok).toMatchObject({ tokenType: "Bearer", expiresIn: 900, scope: "mappings.read" });
    const err = await client
      .createToken({ grantType: "client_credentials", clientId: partner.clientId, clientSecret: "bad" })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    expect((err as ConnectError).metadata.get("x-oauth-error")).toBe("invalid_client");
  });
});
