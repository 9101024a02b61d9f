import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http2 from "node:http2";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let property: { code: string };
let partnerToken: string;

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app);
  await createStaffSession(app, { propertyCode: property.code, role: "manager" });
  partnerToken = (
    await createTestClient(app, {
      propertyCodes: [property.code],
      scopes: ["reservations.write", "availability.read"],
      approved: true,
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

async function rest(
  path: string,
  init: RequestInit = {},
): Promise<{
  status: number;
  body: { error?: { code: string; details?: { field: string }[] } } & Record<string, unknown>;
}> {
  const res = await fetch(`${app.baseUrl}${path}`, init);
  return { status: res.status, body: (await res.json()) as never };
}
const json = (body: unknown, extra: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...extra },
  body: JSON.stringify(body),
});

describe("NUL characters and unpaired surrogates are refused at the edge with 400 invalid_argument", () => {
  it("REST: login e-mail and deviceId, a path parameter, an event's notes, the token endpoint's Basic user", async () => {
    const login = { hotelCode: property.code, email: "a@b.test", password: "x", deviceId: "d", deviceName: "n" };
    for (const body of [
      { ...login, email: "a\u0000@b.test" },
      { ...login, deviceId: "d\u0000" },
      { ...login, deviceName: "x\uD800y" },
    ]) {
      const res = await rest("/api/mobile/v1/auth/login", json(body));
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe("invalid_argument");
    }
    const path = await rest(`/api/v1/properties/${property.code}%00/availability?from=2027-01-01&to=2027-01-02`, {
      headers: { authorization: `Bearer ${partnerToken}` },
    });
    expect(path.status).toBe(400);
    expect(path.body.error?.details?.[0]?.field).toBe("propertyCode");
    const event = {
      eventType: "NEW",
      externalReference: "BK-NUL",
      arrivalDate: "2027-01-10",
      departureDate: "2027-01-12",
      rooms: [{ roomTypeCode: "X", ratePlanCode: "Y", adults: 1, amountMinor: 1 }],
      totalMinor: 1,
      currency: "TRY",
      holder: { name: "G" },
      notes: "a\u0000b",
    };
    const notes = await rest(
      `/api/v1/properties/${property.code}/reservation-events`,
      json(event, { authorization: `Bearer ${partnerToken}`, "idempotency-key": "nul-1" }),
    );
    expect(notes.status).toBe(400);
    const basic = `Basic ${Buffer.from("cli\u0000x:secret").toString("base64")}`;
    const token = await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
      method: "POST",
      headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(token.status).toBe(400);
    expect(((await token.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("Connect and gRPC: the same login answers InvalidArgument, unauthenticated too", async () => {
    const res = await fetch(
      `${app.baseUrl}/hotelops.auth.v1.AuthService/Login`,
      json({ hotelCode: property.code, email: "a\u0000@b.test", password: "x", deviceId: "d", deviceName: "n" }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
    // field 2 (email) = "a\0"
    const grpc = await grpcCall("/hotelops.auth.v1.AuthService/Login", Buffer.from([0x12, 0x02, 0x61, 0x00]));
    expect(grpc.status).toBe("3");
  });
});

function grpcCall(
  path: string,
  payload: Uint8Array,
  contentType = "application/grpc",
): Promise<{ status: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(app.baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": contentType, te: "trailers" });
    let status = "";
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (status = String(h["grpc-status"] ?? "")));
    stream.on("trailers", (t) => (status = String(t["grpc-status"] ?? status)));
    stream.on("data", (d: Buffer) => chunks.push(d));
    stream.on("close", () => (session.close(), resolve({ status, body: Buffer.concat(chunks) })));
    const frame = Buffer.alloc(5 + payload.byteLength);
    frame.writeUInt32BE(payload.byteLength, 1);
    frame.set(payload, 5);
    stream.end(frame);
  });
}

describe("a protobuf body the server cannot parse is the caller's error (invalid_argument)", () => {
  const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  it("Connect: 400 invalid_argument", async () => {
    const res = await fetch(`${app.baseUrl}/hotelops.status.v1.StatusService/GetStatus`, {
      method: "POST",
      headers: { "content-type": "application/proto" },
      body: garbage,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
  });
  it("gRPC: INVALID_ARGUMENT", async () => {
    expect((await grpcCall("/hotelops.status.v1.StatusService/GetStatus", garbage)).status).toBe("3");
  });
  it("gRPC-Web: grpc-status 3 in the trailer frame", async () => {
    const frame = Buffer.alloc(5 + garbage.byteLength);
    frame.writeUInt32BE(garbage.byteLength, 1);
    frame.set(garbage, 5);
    const res = await fetch(`${app.baseUrl}/hotelops.status.v1.StatusService/GetStatus`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: frame,
    });
    const body = Buffer.from(await res.arrayBuffer()).toString("latin1");
    expect(res.headers.get("grpc-status") ?? /grpc-status: ?(\d+)/.exec(body)?.[1]).toBe("3");
  });
});

describe("unknown JSON fields: one rule for REST and Connect", () => {
  it("both answer 400 invalid_argument", async () => {
    const body = {
      hotelCode: property.code,
      email: "a@b.test",
      password: "x",
      deviceId: "d",
      deviceName: "n",
      surprise: 1,
    };
    const viaRest = await rest("/api/mobile/v1/auth/login", json(body));
    expect(viaRest.status).toBe(400);
    const viaConnect = await fetch(`${app.baseUrl}/hotelops.auth.v1.AuthService/Login`, json(body));
    expect(viaConnect.status).toBe(400);
    expect(((await viaConnect.json()) as { code: string }).code).toBe("invalid_argument");
  });
});
