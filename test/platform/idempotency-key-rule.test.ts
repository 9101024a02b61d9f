import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

let app: TestApp;
let partner: { clientId: string; clientSecret: string };
let staffToken: string;
const PASSWORD = "key-rule-pass-2027";
const EMAIL = "keys@rule.test";

/** Keys the rule refuses: a space, 300 characters, a non-ASCII character. */
const BAD_KEYS = ["has space", "k".repeat(300), "clé"];
const GOOD_KEY = "6f1c2a7e-3b9d-4e51-a0c4-9d2f8b7e1a33";

beforeAll(async () => {
  app = await startTestApp();
  const property = await createTestProperty(app, { code: "KEY-A" });
  partner = await createTestClient(app, {
    kind: "partner",
    provider: "channex",
    propertyCodes: [property.code],
    scopes: ["availability.read"],
  });
  staffToken = (
    await createStaffSession(app, { propertyCode: "KEY-A", role: "manager", email: EMAIL, password: PASSWORD })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const login = { hotelCode: "KEY-A", email: EMAIL, password: PASSWORD, deviceId: "key-phone", deviceName: "Phone" };
const report = { reportId: "arrivals", start: "2027-03-01", end: "2027-03-02" };

/** One operation over REST: its path, headers and body. */
const restCalls: Record<string, () => { path: string; headers: Record<string, string>; body: string }> = {
  login: () => ({
    path: "/api/mobile/v1/auth/login",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(login),
  }),
  token: () => ({
    path: "/api/v1/oauth/token",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: basic(partner.clientId, partner.clientSecret),
    },
    body: "grant_type=client_credentials",
  }),
  "report run": () => ({
    path: "/api/mobile/v1/reports",
    headers: { "content-type": "application/json", ...bearer(staffToken) },
    body: JSON.stringify(report),
  }),
};

async function rest(op: string, key: string | undefined): Promise<{ status: number; body: Json }> {
  const { path, headers, body } = restCalls[op]!();
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: "POST",
    headers: { ...headers, ...(key !== undefined ? { "idempotency-key": key } : {}) },
    body,
  });
  return { status: res.status, body: await res.json() };
}

async function rpc(transport: Transport, op: string, key: string | undefined): Promise<Code | "ok"> {
  const headers: Record<string, string> = key !== undefined ? { "idempotency-key": key } : {};
  const call =
    op === "login"
      ? createClient(AuthService, transport).login(login, { headers })
      : op === "token"
        ? createClient(AuthService, transport).createToken(
            { grantType: "client_credentials" },
            { headers: { ...headers, authorization: basic(partner.clientId, partner.clientSecret) } },
          )
        : createClient(MobileService, transport).runReport(report, { headers: { ...headers, ...bearer(staffToken) } });
  return call.then(
    () => "ok" as const,
    (e: unknown) => ConnectError.from(e).code,
  );
}

describe("one Idempotency-Key rule on every operation that documents the header", () => {
  it.each(Object.keys(restCalls))("REST %s: an invalid key is 400, a valid one or none passes", async (op) => {
    for (const key of BAD_KEYS) {
      const res = await rest(op, key);
      expect(res.status, `${op} ${key.slice(0, 20)}`).toBe(400);
      if (op === "token") expect(res.body.error).toBe("invalid_request");
      else expect(res.body.error).toMatchObject({ code: "invalid_argument", details: [{ field: "Idempotency-Key" }] });
    }
    expect((await rest(op, GOOD_KEY)).status).toBe(200);
    expect((await rest(op, undefined)).status).toBe(200);
  });

  for (const [face, make] of [
    ["Connect", () => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
    ["gRPC", () => createGrpcTransport({ baseUrl: app.baseUrl })],
  ] as const) {
    it.each(Object.keys(restCalls))(
      `${face} %s: an invalid key is INVALID_ARGUMENT, a valid one passes`,
      async (op) => {
        const transport = make();
        // gRPC metadata carries printable ASCII only: the non-ASCII key is a REST and Connect case
        for (const key of face === "gRPC" ? BAD_KEYS.slice(0, 2) : BAD_KEYS)
          expect(await rpc(transport, op, key), `${op} ${key.slice(0, 20)}`).toBe(Code.InvalidArgument);
        expect(await rpc(transport, op, GOOD_KEY)).toBe("ok");
      },
    );
  }
});
