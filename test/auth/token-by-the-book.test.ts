import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

let app: TestApp;
let tokenUrl: string;
let partner: { clientId: string; clientSecret: string };
let internal: { clientId: string; clientSecret: string };

beforeAll(async () => {
  app = await startTestApp();
  tokenUrl = `${app.baseUrl}/api/v1/oauth/token`;
  const property = await createTestProperty(app, { code: "BOOK-A" });
  partner = await createTestClient(app, {
    kind: "partner",
    provider: "channex",
    propertyCodes: [property.code],
    scopes: ["availability.read"],
  });
  internal = await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] });
});
afterAll(async () => {
  await app?.close();
});

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
async function post(
  query: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${tokenUrl}${query}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}
const rpcFaces = (): [string, Transport][] => [
  ["Connect", createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
  ["gRPC", createGrpcTransport({ baseUrl: app.baseUrl })],
];

describe("token endpoint parameters in the URL query (RFC 6749 2.3.1, 3.2)", () => {
  it("refuses client credentials in the query with 400 invalid_request, and names no secret back", async () => {
    const q = `?client_id=${encodeURIComponent(partner.clientId)}&client_secret=${encodeURIComponent(partner.clientSecret)}`;
    const res = await post(q, "grant_type=client_credentials");
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_request");
    expect(JSON.stringify(res.body)).not.toContain(partner.clientSecret);
  });

  it("refuses grant_type and scope in the query, even with HTTP Basic", async () => {
    const auth = { authorization: basic(partner.clientId, partner.clientSecret) };
    for (const q of ["?grant_type=client_credentials", "?scope=availability.read"]) {
      const res = await post(q, q.includes("grant_type") ? "" : "grant_type=client_credentials", auth);
      expect(res.status, q).toBe(400);
      expect(res.body.error, q).toBe("invalid_request");
    }
    expect((await post("", "grant_type=client_credentials", auth)).status).toBe(200);
  });
});

describe("token endpoint while the partner API is switched off", () => {
  const setPartnerApi = (on: boolean) =>
    app.db.pool.query("update platform_settings set partner_api_enabled = $1", [on]);

  it("REST: a partner gets 503 temporarily_unavailable with Retry-After; the internal client gets a token and switches it back on", async () => {
    await setPartnerApi(false);
    try {
      const refused = await post("", "grant_type=client_credentials", {
        authorization: basic(partner.clientId, partner.clientSecret),
      });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe("temporarily_unavailable");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      // no credentials at all: the same retryable answer (nothing is verified while off)
      expect((await post("", "grant_type=client_credentials")).body.error).toBe("temporarily_unavailable");

      const admin = await post("", "grant_type=client_credentials", {
        authorization: basic(internal.clientId, internal.clientSecret),
      });
      expect(admin.status).toBe(200);
      const on = await fetch(`${app.baseUrl}/api/admin/v1/platform/partner-api`, {
        method: "POST",
        headers: { ...bearer(admin.body.access_token), "content-type": "application/json" },
        body: JSON.stringify({ enabled: true }),
      });
      expect(on.status).toBe(200);
      expect(((await (await fetch(`${app.baseUrl}/api/v1/status`)).json()) as Json).partnerApi).toBe("enabled");
      expect(
        (
          await post("", "grant_type=client_credentials", {
            authorization: basic(partner.clientId, partner.clientSecret),
          })
        ).status,
      ).toBe(200);
    } finally {
      await setPartnerApi(true);
    }
  });

  it.each(["Connect", "gRPC"])(
    "%s: a partner gets UNAVAILABLE with x-oauth-error temporarily_unavailable and retry-after; the internal client gets a token",
    async (face) => {
      const client = createClient(AuthService, rpcFaces().find(([f]) => f === face)![1]);
      await setPartnerApi(false);
      try {
        const err = await client
          .createToken({
            grantType: "client_credentials",
            clientId: partner.clientId,
            clientSecret: partner.clientSecret,
          })
          .then(
            () => undefined,
            (e: unknown) => ConnectError.from(e),
          );
        expect(err?.code).toBe(Code.Unavailable);
        expect(err?.metadata.get("x-oauth-error")).toBe("temporarily_unavailable");
        expect(Number(err?.metadata.get("retry-after"))).toBeGreaterThan(0);
        const ok = await client.createToken(
          { grantType: "client_credentials" },
          { headers: { authorization: basic(internal.clientId, internal.clientSecret) } },
        );
        expect(ok).toMatchObject({ tokenType: "Bearer", expiresIn: 900 });
      } finally {
        await setPartnerApi(true);
      }
    },
  );
});
