import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { toBinary, fromBinary } from "@bufbuild/protobuf";
import {
  StatusService,
  GetStatusRequestSchema,
  GetStatusResponseSchema,
} from "../../gen/hotelops/status/v1/status_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const expected = { status: "operational", apiVersion: "v1", partnerApi: "enabled", partnerApiRelease: "v1 beta" };

describe("one RPC, every protocol, one port", () => {
  it("answers REST over HTTP/1.1", async () => {
    const res = await fetch(`${app.baseUrl}/api/v1/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.json()).toEqual(expected);
  });

  it("answers Connect over HTTP/1.1 and HTTP/2", async () => {
    for (const httpVersion of ["1.1", "2"] as const) {
      const client = createClient(StatusService, createConnectTransport({ baseUrl: app.baseUrl, httpVersion }));
      const res = await client.getStatus({});
      expect({
        status: res.status,
        apiVersion: res.apiVersion,
        partnerApi: res.partnerApi,
        partnerApiRelease: res.partnerApiRelease,
      }).toEqual(expected);
    }
  });

  it("answers gRPC-Web and Connect's gRPC transport", async () => {
    const web = createClient(StatusService, createGrpcWebTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }));
    expect((await web.getStatus({})).apiVersion).toBe("v1");
    const g = createClient(StatusService, createGrpcTransport({ baseUrl: app.baseUrl }));
    expect((await g.getStatus({})).status).toBe("operational");
  });

  it("answers a real @grpc/grpc-js client over h2c", async () => {
    const client = new grpc.Client(`127.0.0.1:${app.port}`, grpc.credentials.createInsecure());
    try {
      const res = await new Promise<Uint8Array>((resolve, reject) => {
        client.makeUnaryRequest(
          "/hotelops.status.v1.StatusService/GetStatus",
          (m: Uint8Array) => Buffer.from(m),
          (b: Buffer) => new Uint8Array(b),
          toBinary(GetStatusRequestSchema, { $typeName: "hotelops.status.v1.GetStatusRequest" }),
          (err, value) => (err || !value ? reject(err ?? new Error("no value")) : resolve(value)),
        );
      });
      const msg = fromBinary(GetStatusResponseSchema, res);
      expect(msg.partnerApi).toBe("enabled");
    } finally {
      client.close();
    }
  });

  it("answers curl-style h2c prior knowledge for REST", async () => {
    const { connect } = await import("node:http2");
    const session = connect(app.baseUrl);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ":path": "/api/v1/status", ":method": "GET" });
        let data = "";
        req.setEncoding("utf8");
        req.on("data", (c: string) => (data += c));
        req.on("end", () => resolve(data));
        req.on("error", reject);
      });
      expect(JSON.parse(body)).toEqual(expected);
    } finally {
      session.close();
    }
  });
});

describe("request ids", () => {
  it("echoes a valid X-Request-Id and replaces an invalid one", async () => {
    const ok = await fetch(`${app.baseUrl}/api/v1/status`, { headers: { "x-request-id": "abc-123" } });
    expect(ok.headers.get("x-request-id")).toBe("abc-123");
    const bad = await fetch(`${app.baseUrl}/api/v1/status`, { headers: { "x-request-id": "bad id with spaces" } });
    expect(bad.headers.get("x-request-id")).not.toBe("bad id with spaces");
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("returns the request id as gRPC metadata", async () => {
    const client = createClient(StatusService, createGrpcTransport({ baseUrl: app.baseUrl }));
    let header: Headers | undefined;
    await client.getStatus({}, { headers: { "x-request-id": "grpc-req-1" }, onHeader: (h) => (header = h) });
    expect(header?.get("x-request-id")).toBe("grpc-req-1");
  });
});

describe("health", () => {
  it("serves /healthz and /readyz", async () => {
    expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${app.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ok" });
  });
});

describe("errors over gRPC", () => {
  it("carry our code in an ErrorInfo detail and the request id in metadata", async () => {
    const { ConnectError, Code } = await import("@connectrpc/connect");
    const { ErrorInfoSchema } = await import("../../gen/hotelops/api/v1/rest_pb.js");
    const { Health } = await import("../../gen/grpc/health/v1/health_pb.js");
    const client = createClient(Health, createGrpcTransport({ baseUrl: app.baseUrl }));
    try {
      await client.check({ service: "no.such.Service" }, { headers: { "x-request-id": "err-1" } });
      expect.unreachable();
    } catch (err) {
      const e = ConnectError.from(err);
      expect(e.code).toBe(Code.NotFound);
      expect(e.metadata.get("x-request-id")).toBe("err-1");
      const [info] = e.findDetails(ErrorInfoSchema);
      expect(info?.code).toBe("not_found");
      expect(info?.requestId).toBe("err-1");
    }
  });
});
