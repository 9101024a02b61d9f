// What one answer may cost before the caller is authenticated (src/server/preflight.ts), on REST, Connect and gRPC,
// served by the unary fast path and by connect-es's handlers (UNARY_FAST_PATH=off): an RPC that needs a caller,
// called without credentials, gets its 401 before its body is read (the body here never finishes), and a public RPC
// reads at most ANONYMOUS_MAX_BODY_BYTES.
import http from "node:http";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { ANONYMOUS_MAX_BODY_BYTES } from "../../src/server/preflight.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const apps: Record<"fast path" | "connect-es", TestApp | undefined> = {
  "fast path": undefined,
  "connect-es": undefined,
};
const LIST_CLIENTS = "/hotelops.admin.v1.AdminService/ListClients";
const LOGIN = "/hotelops.auth.v1.AuthService/Login";
const PROMISED = 4 * 1024 * 1024;

beforeAll(async () => {
  apps["fast path"] = await startTestApp({ env: { UNARY_FAST_PATH: "on" } });
  apps["connect-es"] = await startTestApp({ env: { UNARY_FAST_PATH: "off" } });
});
afterAll(async () => {
  for (const app of Object.values(apps)) await app?.close();
});

/** An HTTP/1.1 request that promises `length` bytes and sends `sent` of them, never finishing; the answer's status and body. */
function h1Unfinished(
  port: number,
  path: string,
  headers: Record<string, string>,
  sent: Buffer,
  length: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      headers: { ...headers, "content-length": String(length) },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on("error", reject);
    req.write(sent);
  });
}

/** A gRPC call over HTTP/2 whose envelope promises `length` bytes and sends `sent`, never ending; its grpc-status. */
function grpcUnfinished(port: number, path: string, sent: Buffer, length: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
    });
    let status: string | undefined;
    const take = (h: http2.IncomingHttpHeaders): void => {
      const s = h["grpc-status"];
      if (typeof s === "string") status = s;
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => undefined);
    stream.on("close", () => {
      session.destroy();
      resolve(status);
    });
    stream.on("error", () => undefined);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(length, 1);
    stream.write(Buffer.concat([head, sent]));
  });
}

const within = <T>(p: Promise<T>, ms = 5000): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))]);

describe.each(["fast path", "connect-es"] as const)("%s", (name) => {
  const app = (): TestApp => apps[name]!;

  it("REST: 401 without credentials before the body is read", async () => {
    const res = await within(
      h1Unfinished(
        app().port,
        "/api/admin/v1/properties",
        { "content-type": "application/json" },
        Buffer.from("{"),
        PROMISED,
      ),
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("Connect: 401 without credentials before the body is read", async () => {
    const res = await within(
      h1Unfinished(app().port, LIST_CLIENTS, { "content-type": "application/json" }, Buffer.from("{"), PROMISED),
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: "unauthenticated" });
  });

  it("gRPC: UNAUTHENTICATED without credentials before the body is read", async () => {
    const status = await within(grpcUnfinished(app().port, LIST_CLIENTS, Buffer.alloc(1000), PROMISED));
    expect(status).toBe(String(grpc.status.UNAUTHENTICATED));
  });

  it("gRPC: a public RPC whose body never finishes gets RESOURCE_EXHAUSTED and its stream closed after the trailers", async () => {
    // the server has read the envelope's head, so Node does not close the stream by itself: we reset it (NO_ERROR)
    const status = await within(grpcUnfinished(app().port, LOGIN, Buffer.alloc(1000), PROMISED));
    expect(status).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
  });

  const big = JSON.stringify({ hotelCode: "x".repeat(ANONYMOUS_MAX_BODY_BYTES), email: "a@b.c", password: "p" });

  it("REST: a public RPC reads at most the anonymous limit (413)", async () => {
    const res = await fetch(`${app().baseUrl}/api/mobile/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  it("Connect: a public RPC reads at most the anonymous limit (resource_exhausted)", async () => {
    const res = await fetch(`${app().baseUrl}${LOGIN}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(((await res.json()) as { code: string }).code).toBe("resource_exhausted");
  });

  it("gRPC (grpc-js): a public RPC reads at most the anonymous limit (RESOURCE_EXHAUSTED)", async () => {
    const client = new grpc.Client(`127.0.0.1:${app().port}`, grpc.credentials.createInsecure());
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        LOGIN,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(ANONYMOUS_MAX_BODY_BYTES + 100),
        (e) => resolve(e),
      ),
    );
    client.close();
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });
});
