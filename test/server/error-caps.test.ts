import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { fromJson } from "@bufbuild/protobuf";
import {
  ConnectivityService,
  CreateReservationEventRequestSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { createAdminService } from "../../src/modules/admin/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createTestClient, createTestProperty } from "../helpers/auth.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
type Json = any;

let app: TestApp;
let token: string;
const PROPERTY = "CAP-A";

beforeAll(async () => {
  app = await startTestApp();
  await createTestProperty(app, { code: PROPERTY });
  const c = await createTestClient(app, { propertyCodes: [PROPERTY], scopes: ["reservations.write"] });
  await createAdminService(app.deps).approveClient(c.clientId);
  const res = await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: c.clientId,
      client_secret: c.clientSecret,
    }).toString(),
  });
  token = ((await res.json()) as Json).access_token;
});
afterAll(async () => {
  await app?.close();
});

/** 1000 empty rooms: three violations each, 3001 with "rooms must hold 1 to 20 rooms". */
const event = {
  eventType: "NEW",
  externalReference: "BK-CAP",
  arrivalDate: "2027-03-01",
  departureDate: "2027-03-02",
  currency: "TRY",
  totalMinor: 0,
  holder: { name: "Cap Guest" },
  rooms: Array.from({ length: 1000 }, () => ({})),
};

function expectCapped(details: { field: string; reason: string }[]): void {
  expect(details).toHaveLength(21);
  expect(details[20]).toEqual({ field: "", reason: "2981 more problems not listed" });
}

describe("error answers never amplify: the first 20 violations and a count", () => {
  it("REST: an anonymous body of 3000 unknown keys gets a small answer", async () => {
    const body: Record<string, number> = {};
    // under the 64 KiB an anonymous login body may hold (a larger one is 413 before it is parsed)
    for (let i = 0; i < 3000; i++) body[`unknown_${i}`] = 1;
    const sent = JSON.stringify(body);
    expect(sent.length).toBeLessThan(64 * 1024);
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sent,
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text.length).toBeLessThan(8 * 1024);
    const error = (JSON.parse(text) as Json).error;
    expect(error.details).toHaveLength(21);
    expect(error.details[20]).toEqual({ field: "", reason: "2980 more problems not listed" });
    expect(error.message.length).toBeLessThanOrEqual(1000);
  });

  it("REST: 3001 violations of a reservation event are 20 and a count", async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${PROPERTY}/reservation-events`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "cap-rest", ...bearer(token) },
      body: JSON.stringify(event),
    });
    const text = await res.text();
    expect(res.status).toBe(422);
    expect(text.length).toBeLessThan(8 * 1024);
    expectCapped((JSON.parse(text) as Json).error.details);
  });

  it.each([
    ["Connect", (): Transport => createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" })],
    ["gRPC", (): Transport => createGrpcTransport({ baseUrl: app.baseUrl })],
  ])("%s: 3001 violations are 20 and a count, the message stays short", async (_face, transport) => {
    const client = createClient(ConnectivityService, transport());
    const err = await client
      .createReservationEvent(fromJson(CreateReservationEventRequestSchema, { propertyCode: PROPERTY, ...event }), {
        headers: { ...bearer(token), "idempotency-key": `cap-${_face}` },
      })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err).toBeDefined();
    expect(err!.rawMessage.length).toBeLessThanOrEqual(1000);
    const [info] = err!.findDetails(ErrorInfoSchema);
    expectCapped(info!.details.map((d) => ({ field: d.field, reason: d.reason })));
  });
});
