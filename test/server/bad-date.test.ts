import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { ConnectivityService } from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// A bad date is one rule with one answer: 400 / INVALID_ARGUMENT with the field and the same reason, on REST,
// Connect and gRPC, whichever endpoint receives it (here the operators' CreateProperty and the partners'
// GetAvailability, which once validated dates differently: 2026-02-30 passed the first and failed in SQL).

let app: TestApp;
let admin: string;
let partner: string;
let propertyCode: string;

beforeAll(async () => {
  app = await startTestApp();
  admin = (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken;
  propertyCode = (await createTestProperty(app, { businessDate: "2027-01-01" })).code;
  partner = (
    await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [propertyCode],
      scopes: ["availability.read"],
      approved: true,
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const expected = (field: string) => ({
  code: "invalid_argument",
  details: [{ field, reason: "must be a date YYYY-MM-DD" }],
});

async function rest(method: "GET" | "POST", path: string, token: string, body?: object) {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the error body is asserted field by field
  const json = (await res.json()) as any;
  return { status: res.status, code: json.error?.code, details: json.error?.details };
}

async function rpcFailure(work: Promise<unknown>) {
  const err = await work.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  expect(err).toBeInstanceOf(ConnectError);
  const [info] = err!.findDetails(ErrorInfoSchema);
  return {
    status: err!.code,
    code: info?.code,
    details: (info?.details ?? []).map((d) => ({ field: d.field, reason: d.reason })),
  };
}

const transports = (token: string): [string, Transport][] => {
  const auth: Interceptor[] = [(next) => (req) => (req.header.set("authorization", `Bearer ${token}`), next(req))];
  return [
    ["Connect", createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1", interceptors: auth })],
    ["gRPC", createGrpcTransport({ baseUrl: app.baseUrl, interceptors: auth })],
  ];
};

describe("a bad date gets the same error on every face and endpoint", () => {
  const property = (businessDate: string) => ({
    groupCode: "DATES",
    code: `DATES-${businessDate.replaceAll("-", "")}`,
    name: "Dates",
    timeZone: "Europe/Istanbul",
    currency: "EUR",
    businessDate,
  });

  it("CreateProperty: businessDate 2026-02-30 and 2026-2-01", async () => {
    for (const bad of ["2026-02-30", "2026-2-01"]) {
      expect(await rest("POST", "/api/admin/v1/properties", admin, property(bad))).toEqual({
        status: 400,
        ...expected("businessDate"),
      });
      for (const [face, transport] of transports(admin)) {
        const failure = await rpcFailure(createClient(AdminService, transport).createProperty(property(bad)));
        expect({ face, ...failure }).toEqual({ face, status: Code.InvalidArgument, ...expected("businessDate") });
      }
    }
    // a real day still passes
    const ok = await rest("POST", "/api/admin/v1/properties", admin, property("2028-02-29"));
    expect(ok.status).toBe(200);
  });

  it("GetAvailability: from 2027-02-30 and to 2027-13-01", async () => {
    const cases = [
      { from: "2027-02-30", to: "2027-03-05", field: "from" },
      { from: "2027-01-02", to: "2027-13-01", field: "to" },
    ];
    for (const c of cases) {
      expect(
        await rest("GET", `/api/v1/properties/${propertyCode}/availability?from=${c.from}&to=${c.to}`, partner),
      ).toEqual({ status: 400, ...expected(c.field) });
      for (const [face, transport] of transports(partner)) {
        const failure = await rpcFailure(
          createClient(ConnectivityService, transport).getAvailability({ propertyCode, from: c.from, to: c.to }),
        );
        expect({ face, ...failure }).toEqual({ face, status: Code.InvalidArgument, ...expected(c.field) });
      }
    }
  });
});
