// The Python client (sdk-python/) against the real server, run by Debian's python3 with python3-grpcio and
// python3-protobuf: its quickstart (status, partner token + availability, staff login + dashboard, an error with
// its ErrorInfo), its webhook verifiers on the documented vectors (docs/partners/webhooks.md) and on real deliveries of a started server (HMAC and
// ed25519 addresses, every header scheme), and grpcio's own `grpc` package left unshadowed.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requirePythonGrpc } from "../helpers/prerequisites.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { recordEvent } from "../../src/modules/events/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { seedRoomTypeAndRatePlan } from "../helpers/hotel-fixtures.ts";
import { createTestCa, startReceiver, startWebhookApp, testResolver } from "../helpers/webhooks.ts";

const run = promisify(execFile);
const sdkPython = new URL("../../sdk-python", import.meta.url).pathname;
// Debian's interpreter (.ci/run installs python3-grpcio and python3-protobuf for it), not a pyenv shim
let PYTHON = "";
const python = (args: string[], env: Record<string, string> = {}) =>
  run(PYTHON, args, { cwd: sdkPython, env: { ...process.env, PYTHONPATH: sdkPython, ...env }, timeout: 60_000 });

let app: TestApp;
beforeAll(async () => {
  PYTHON = requirePythonGrpc();
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe("Python client (sdk-python)", () => {
  it("quickstart: status, partner availability with a client-credentials token, staff dashboard, ErrorInfo of a refused call", async () => {
    const property = await createTestProperty(app, { businessDate: "2026-11-22" });
    await seedRoomTypeAndRatePlan(app.deps.db.pool, property);
    const client = await createTestClient(app, { propertyCodes: [property.code], scopes: ["availability.read"] });
    const staff = await createStaffSession(app, { propertyCode: property.code, role: "manager" });
    const { stdout } = await python(["examples/quickstart.py"], {
      HOTELOPS_URL: app.baseUrl,
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      PROPERTY_CODE: property.code,
      STAFF_EMAIL: staff.email,
      STAFF_PASSWORD: "test-pass-2026",
    });
    const out = JSON.parse(stdout) as {
      status: string;
      availability: Record<string, number[]>;
      error: { status: string; code: string; fields: string[]; requestId: string };
      dashboard: { businessDate: string; roomsTotal: number };
    };
    expect(out.status).toBe("operational");
    expect(out.availability).toEqual({ DBL: [10, 10] });
    expect(out.error).toEqual({
      status: "INVALID_ARGUMENT",
      code: "invalid_argument",
      fields: ["to"],
      requestId: expect.stringMatching(/\S/),
    });
    expect(out.dashboard).toEqual({ businessDate: "2026-11-22", roomsTotal: 10 });
  });

  it("a refused token request raises TokenError with the OAuth code; a foreign property is NOT_FOUND with ErrorInfo not_found", async () => {
    const property = await createTestProperty(app);
    const other = await createTestProperty(app);
    const client = await createTestClient(app, { propertyCodes: [property.code], scopes: ["availability.read"] });
    const script = `
import json, sys, grpc
from hotelops_client import ClientCredentials, error_info, open_channel
from hotelops_client.tokens import TokenError
from hotelops_client.v1 import connectivity, connectivity_grpc
url, cid, secret, other = sys.argv[1:5]
out = {}
try:
    ClientCredentials(url, cid, secret + "x").access_token()
except TokenError as e:
    out["token"] = [e.status, e.error]
with open_channel(url, ClientCredentials(url, cid, secret)) as ch:
    try:
        connectivity_grpc.ConnectivityServiceStub(ch).GetAvailability(connectivity.GetAvailabilityRequest(property_code=other, **{"from": "2027-01-01", "to": "2027-01-02"}))
    except grpc.RpcError as e:
        out["foreign"] = [e.code().name, error_info(e).code]
print(json.dumps(out))
`;
    const { stdout } = await python(["-c", script, app.baseUrl, client.clientId, client.clientSecret, other.code]);
    expect(JSON.parse(stdout)).toEqual({ token: [401, "invalid_client"], foreign: ["NOT_FOUND", "not_found"] });
  });

  it("verifies webhooks with the documented vectors and says why one fails", async () => {
    const script = `
import json
from hotelops_client import verify_webhook, WebhookVerificationError
secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2Aqxyhz1sgA"
old = "whsec_oldSecretOldSecretOldSecretOldSecret0000"
t = 1767225600
body = b'{"id":"0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90","type":"webhook.test","apiVersion":"v1","createdAt":"2026-01-01T00:00:00.000Z","occurredAt":"2026-01-01T00:00:00.000Z","property":{"code":"DEMO-IST"},"data":{"message":"hello"}}'
header = f"t={t},v1=22d94433e69ebfb137b1c6bc40db902e3584eb043ce28a80c6e46a4f8874022b"
overlap = header + ",v1=641817600e36e217285e690469b5227e7da755b0d98838bd7a4c1d6de3ef9a83"
def check(*args, **kw):
    try:
        return verify_webhook(*args, **kw)
    except WebhookVerificationError as e:
        return e.reason
print(json.dumps([check(body, header, secret, now=t), check(body, [overlap], old, now=t), check(body + b" ", header, secret, now=t),
  check(body, header, secret, now=t + 301), check(body, None, secret, now=t), check(body, "t=abc", secret, now=t), check(body, header, "", now=t)]))
from hotelops_client import verify_standard_webhook
std = {"Webhook-Id": "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90", "webhook-timestamp": str(t), "webhook-signature": "v1,2nigoo94xxy5hy9sn4FZziUjzTnbuRUkTQ6FRU6hO0Y= v1,S93fdILbFxoAlnovrf+77+9ZF3iydA//ftGQD/3rRWk="}
def check_std(*args, **kw):
    try:
        return list(verify_standard_webhook(*args, **kw))
    except WebhookVerificationError as e:
        return e.reason
print(json.dumps([check_std(body, std, secret, now=t), check_std(body, std, old, now=t), check_std(body + b" ", std, secret, now=t),
  check_std(body, std, secret, now=t - 301), check_std(body, {}, secret, now=t), check_std(body, dict(std, **{"webhook-timestamp": "x"}), secret, now=t)]))
`;
    const { stdout } = await python(["-c", script]);
    const [serviceSignature, standard] = stdout.trim().split("\n");
    const id = "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90";
    expect(JSON.parse(standard!)).toEqual([
      [id, 1767225600],
      [id, 1767225600],
      "signature_mismatch",
      "timestamp_out_of_tolerance",
      "missing_header",
      "malformed_header",
    ]);
    expect(JSON.parse(serviceSignature!)).toEqual([
      1767225600,
      1767225600,
      "signature_mismatch",
      "timestamp_out_of_tolerance",
      "missing_header",
      "malformed_header",
      "missing_secret",
    ]);
  });

  it("verifies real deliveries of a started server: Service-Signature and Standard Webhooks v1 with the secret, v1a with an ed25519 address's whpk_ key; a changed body fails", async () => {
    const ca = createTestCa();
    const receiver = await startReceiver(ca);
    const hooks = await startWebhookApp({ ca, clock: systemClock, webhooks: { resolver: testResolver() } });
    try {
      const property = await createTestProperty(hooks);
      const staff = await createStaffSession(hooks, { propertyCode: property.code, role: "manager" });
      const actor = { propertyId: property.id, userId: staff.userId };
      const hmacOnly = await hooks.parts.service.create(actor, {
        url: receiver.url("/hmac"),
        eventTypes: ["reservation.created"],
      });
      const signed = await hooks.parts.service.create(actor, {
        url: receiver.url("/ed25519"),
        eventTypes: ["reservation.created"],
        ed25519: true,
      });
      await hooks.deps.transact((tx) =>
        recordEvent(tx, {
          propertyId: property.id,
          type: "reservation.created",
          occurredAt: new Date(),
          data: { id: "r", code: "R-1", adults: 2 },
        }),
      );
      const got = await receiver.waitFor(2, 15_000);
      const delivery = (path: string) => {
        const r = got.find((x) => x.path === path)!;
        return { body: r.body, headers: r.headers };
      };
      const input = {
        secret: hmacOnly.secret,
        hmac: delivery("/hmac"),
        publicKey: signed.endpoint.publicKey,
        otherSecret: signed.secret,
        ed25519: delivery("/ed25519"),
      };
      const script = `
import json, sys
from hotelops_client import verify_standard_webhook, verify_webhook, WebhookVerificationError
d = json.loads(sys.stdin.read())
def check(fn, *args):
    try:
        r = fn(*args)
        return list(r) if isinstance(r, tuple) else r
    except WebhookVerificationError as e:
        return e.reason
h, e = d["hmac"], d["ed25519"]
body, ebody = h["body"].encode(), e["body"].encode()
print(json.dumps({
  "service": check(verify_webhook, body, h["headers"]["service-signature"], d["secret"]),
  "standard": check(verify_standard_webhook, body, h["headers"], d["secret"]),
  "ed25519": check(verify_standard_webhook, ebody, e["headers"], d["publicKey"]),
  "ed25519WithItsSecret": check(verify_standard_webhook, ebody, e["headers"], d["otherSecret"]),
  "ed25519ChangedBody": check(verify_standard_webhook, ebody + b" ", e["headers"], d["publicKey"]),
  "standardOtherSecret": check(verify_standard_webhook, body, h["headers"], d["otherSecret"]),
  "noEd25519OnHmacAddress": check(verify_standard_webhook, body, h["headers"], d["publicKey"]),
  "id": json.loads(body)["id"],
}))
`;
      const child = execFile(PYTHON, ["-c", script], {
        cwd: sdkPython,
        env: { ...process.env, PYTHONPATH: sdkPython },
      });
      child.stdin!.end(JSON.stringify(input));
      const stdout = await new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
        child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
        child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
      });
      const out = JSON.parse(stdout) as Record<string, unknown> & { id: string };
      const t = Number(input.hmac.headers["webhook-timestamp"]);
      expect(out).toEqual({
        service: t,
        standard: [out.id, t],
        ed25519: [expect.stringMatching(/^[0-9a-f-]{36}$/), Number(input.ed25519.headers["webhook-timestamp"])],
        ed25519WithItsSecret: [expect.stringMatching(/^[0-9a-f-]{36}$/), expect.any(Number)],
        ed25519ChangedBody: "signature_mismatch",
        standardOtherSecret: "signature_mismatch",
        noEd25519OnHmacAddress: "malformed_header",
        id: input.hmac.headers["webhook-id"],
      });
    } finally {
      await hooks.close();
      await receiver.close();
    }
  });

  it("leaves grpcio's grpc package unshadowed: the stubs live under hotelops_client._proto, no vendored grpc/ is generated", async () => {
    expect(existsSync(`${sdkPython}/grpc`)).toBe(false);
    expect(existsSync(`${sdkPython}/hotelops_client/_proto/grpc`)).toBe(false);
    const { stdout } = await python([
      "-c",
      "import hotelops_client.v1, grpc, google.protobuf; print(grpc.__file__); print(hotelops_client.v1.status.__name__)",
    ]);
    const [grpcFile, statusModule] = stdout.trim().split("\n");
    expect(grpcFile).toMatch(/(dist|site)-packages\/grpc\/__init__\.py$/);
    expect(statusModule).toBe("hotelops_client._proto.hotelops.status.v1.status_pb2");
  });
});
