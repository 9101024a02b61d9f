import { describe, expect, it } from "vitest";
import { createTrafficChecker, type Exchange } from "../helpers/openapi-traffic.ts";

// The check every integration test's REST traffic goes through (test/helpers/openapi-setup.ts) must be able to fail.
const checker = createTrafficChecker();

function exchange(over: Partial<Exchange> & { path: string; body?: unknown }): Exchange {
  return {
    method: "POST",
    url: new URL(`http://127.0.0.1:1${over.path}`),
    requestHeaders: new Headers({ "content-type": "application/json" }),
    requestBody: over.body === undefined ? { kind: "none" } : { kind: "json", text: JSON.stringify(over.body) },
    status: 200,
    responseHeaders: new Headers({ "content-type": "application/json" }),
    responseText: "",
    ...over,
  };
}

const session = {
  tokens: { accessToken: "a", refreshToken: "r", expiresIn: 900 },
  profile: { userId: "u", activePropertyId: "p", properties: [] },
};
const login = { hotelCode: "DEMO-IST", email: "manager@demo.test", password: "x", deviceId: "d", deviceName: "n" };

describe("OpenAPI traffic check", () => {
  it("accepts a documented exchange and ignores paths the document does not describe", () => {
    expect(
      checker.check(
        exchange({ path: "/api/mobile/v1/auth/login", body: login, responseText: JSON.stringify(session) }),
      ),
    ).toEqual([]);
    expect(checker.check(exchange({ path: "/t/v1/things" }))).toBeUndefined();
  });

  it("flags a response with keys of both login shapes, an undocumented status, a missing required key", () => {
    const merged = checker.check(
      exchange({
        path: "/api/mobile/v1/auth/login",
        body: login,
        responseText: JSON.stringify({ ...session, challengeId: null, maskedEmail: null, expiresAt: null }),
      }),
    );
    expect(merged).toHaveLength(1);
    expect(
      checker.check(exchange({ path: "/api/mobile/v1/auth/login", body: login, status: 418, responseText: "{}" }))![0],
    ).toContain("status 418 is not documented");
    const { tokens: _t, ...partial } = session;
    expect(
      checker.check(
        exchange({ path: "/api/mobile/v1/auth/login", body: login, responseText: JSON.stringify(partial) }),
      ),
    ).toHaveLength(1);
  });

  it("flags a server that accepts what the document forbids, and not one that refuses it", () => {
    const event = { eventType: "SOMETHING", externalReference: "BK-1" };
    const accepted = exchange({
      path: "/api/v1/properties/DEMO-IST/reservation-events",
      body: event,
      status: 202,
      responseText: JSON.stringify({ eventId: "e", status: "QUEUED" }),
    });
    expect(checker.check(accepted)!.join()).toContain("accepted a request the document forbids");
    const noKey = exchange({
      path: "/api/v1/properties/DEMO-IST/reservation-events",
      body: { eventType: "NEW", externalReference: "BK-1" },
      status: 202,
      responseText: JSON.stringify({ eventId: "e", status: "QUEUED" }),
    });
    expect(checker.check(noKey)!.join()).toContain("Idempotency-Key");
    const refused = {
      ...accepted,
      status: 422,
      responseText: JSON.stringify({ error: { code: "validation_failed", message: "m", requestId: "r" } }),
    };
    expect(checker.check(refused)).toEqual([]);
    const missingQuery = exchange({
      method: "GET",
      path: "/api/v1/properties/DEMO-IST/availability",
      status: 200,
      responseText: JSON.stringify({
        propertyCode: "DEMO-IST",
        from: "2027-01-01",
        to: "2027-01-02",
        toExclusive: true,
        roomTypes: [],
      }),
    });
    expect(checker.check(missingQuery)!.join()).toContain("missing required query parameter from");
  });
});
