// The unary fast path (src/server/unary.ts) against connect-es's own handlers: the same router, interceptors
// and implementations served twice over real sockets, once with the fast path and once without; every answer
// (status, headers, body bytes, trailers) must be the same, for Connect, gRPC-Web and gRPC, plain and compressed,
// with errors, size limits, bad bodies and deadlines. Then real clients (connect-node, grpc-js) on the fast path.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckRequestSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { GetStatusRequestSchema, StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { AppError } from "../../src/errors.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createRecordingRouter } from "../../src/server/calls.ts";
import { COMPRESS_MIN_BYTES, connectCompressions } from "../../src/server/compression.ts";
import { createDispatcher } from "../../src/server/dispatch.ts";
import { createCallInterceptor } from "../../src/server/interceptors.ts";
import { listen, type Listener } from "../../src/server/listen.ts";
import { createUnaryFastPath } from "../../src/server/unary.ts";

const READ_MAX = 4096;
const WRITE_MAX = 8192;
let fast: Listener;
let plain: Listener;
let served = 0;
/** Request ids of calls whose signal aborted while the implementation waited. */
const aborted: string[] = [];

beforeAll(async () => {
  const logger = createLogger("silent");
  const router = createRecordingRouter({
    interceptors: [createCallInterceptor(logger)],
    readMaxBytes: READ_MAX,
    writeMaxBytes: WRITE_MAX,
    acceptCompression: connectCompressions,
    compressMinBytes: COMPRESS_MIN_BYTES,
  });
  router.service(StatusService, {
    async getStatus(_req, ctx) {
      const mode = ctx.requestHeader.get("x-case") ?? "ok";
      ctx.responseHeader.set("x-answer", "yes");
      ctx.responseTrailer.set("x-trailer", "done");
      if (mode === "app-error")
        throw new AppError("not_found", "No such thing.", { details: [{ field: "code", reason: "unknown" }] });
      if (mode === "raw-error") throw new Error("boom");
      if (mode === "deadline") {
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        aborted.push(ctx.requestHeader.get("x-request-id") ?? "");
        throw ctx.signal.reason;
      }
      const status = mode === "big" ? "x".repeat(3000) : mode === "huge" ? "é".repeat(WRITE_MAX) : "operational";
      return { status, apiVersion: "v1", partnerApi: "é" };
    },
  });
  router.service(Health, {
    check(req) {
      if (req.service !== "") throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status: 1 };
    },
  });
  const gateway = { handle: async (_q: unknown, res: http.ServerResponse) => void res.writeHead(404).end() };
  const unary = createUnaryFastPath(router.direct);
  const counted = (...args: Parameters<typeof unary>): ReturnType<typeof unary> => {
    const taken = unary(...args);
    if (taken !== undefined) served++;
    return taken;
  };
  const base = { handlers: router.handlers, gateway: gateway as never, ready: async () => true, logger };
  fast = await listen(createDispatcher({ ...base, unary: counted }), { port: 0, host: "127.0.0.1" });
  plain = await listen(createDispatcher(base), { port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await fast?.close(0);
  await plain?.close(0);
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  trailers: Record<string, unknown>;
}

const STATUS = "/hotelops.status.v1.StatusService/GetStatus";
const CHECK = "/grpc.health.v1.Health/Check";
// Framing details that differ without meaning: Content-Length where connect-es writes chunked, the date.
const framing = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive"]);

function normalize(status: number, headers: Record<string, unknown>, body: Buffer, trailers: Record<string, unknown>) {
  const h = Object.fromEntries(Object.entries(headers).filter(([k]) => !framing.has(k) && !k.startsWith(":")));
  return { status, headers: h, body: body.toString("base64"), trailers: { ...trailers } };
}

function h1(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ port, host: "127.0.0.1", path, method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(normalize(res.statusCode!, res.headers, Buffer.concat(chunks), res.trailers)));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function h2(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (head = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      session.close();
      resolve(normalize(Number(head[":status"]), head, Buffer.concat(chunks), trailers));
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

function frame(data: Uint8Array, flags = 0): Buffer {
  const out = Buffer.alloc(5 + data.byteLength);
  out[0] = flags;
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
}

const emptyStatus = Buffer.from(toBinary(GetStatusRequestSchema, create(GetStatusRequestSchema)));
const check = (service: string) =>
  Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service })));

/** Each case: a path, headers and a body, sent the same way to both servers. */
type Case = [name: string, path: string, headers: Record<string, string>, body: Buffer];

const connectCases: Case[] = [
  ["JSON", STATUS, { "content-type": "application/json" }, Buffer.from("{}")],
  ["proto", STATUS, { "content-type": "application/proto" }, emptyStatus],
  ["charset", STATUS, { "content-type": "application/json; charset=utf-8" }, Buffer.from("{}")],
  [
    "big, gzip",
    STATUS,
    { "content-type": "application/json", "accept-encoding": "gzip", "x-case": "big" },
    Buffer.from("{}"),
  ],
  ["big, br", STATUS, { "content-type": "application/proto", "accept-encoding": "br", "x-case": "big" }, emptyStatus],
  ["big, plain", STATUS, { "content-type": "application/json", "x-case": "big" }, Buffer.from("{}")],
  ["over writeMaxBytes, JSON", STATUS, { "content-type": "application/json", "x-case": "huge" }, Buffer.from("{}")],
  ["over writeMaxBytes, proto", STATUS, { "content-type": "application/proto", "x-case": "huge" }, emptyStatus],
  ["gzip body", CHECK, { "content-type": "application/json", "content-encoding": "gzip" }, gzipSync('{"service":""}')],
  ["unknown coding", CHECK, { "content-type": "application/json", "content-encoding": "snappy" }, Buffer.from("{}")],
  ["AppError", STATUS, { "content-type": "application/json", "x-case": "app-error" }, Buffer.from("{}")],
  ["Error", STATUS, { "content-type": "application/json", "x-case": "raw-error" }, Buffer.from("{}")],
  ["ConnectError", CHECK, { "content-type": "application/json" }, Buffer.from('{"service":"nope"}')],
  ["unknown field", CHECK, { "content-type": "application/json" }, Buffer.from('{"service":"","bogus":1}')],
  ["bad JSON", CHECK, { "content-type": "application/json" }, Buffer.from("{")],
  ["bad proto", CHECK, { "content-type": "application/proto" }, Buffer.from([0x0a, 0x09, 0x41])],
  ["too large", CHECK, { "content-type": "application/json" }, Buffer.alloc(READ_MAX + 1, 32)],
  [
    "deadline",
    STATUS,
    { "content-type": "application/json", "connect-timeout-ms": "30", "x-case": "deadline" },
    Buffer.from("{}"),
  ],
  ["bad timeout", STATUS, { "content-type": "application/json", "connect-timeout-ms": "x" }, Buffer.from("{}")],
];

const envelopedCases = (ct: string, timeout: string): Case[] => [
  ["proto", STATUS, { "content-type": ct }, frame(emptyStatus)],
  ["big, gzip", STATUS, { "content-type": ct, "grpc-accept-encoding": "gzip", "x-case": "big" }, frame(emptyStatus)],
  [
    "big, zstd",
    STATUS,
    { "content-type": ct, "grpc-accept-encoding": "zstd,gzip", "x-case": "big" },
    frame(emptyStatus),
  ],
  ["over writeMaxBytes", STATUS, { "content-type": ct, "x-case": "huge" }, frame(emptyStatus)],
  ["gzip message", CHECK, { "content-type": ct, "grpc-encoding": "gzip" }, frame(gzipSync(check("")), 1)],
  ["compressed, no coding", CHECK, { "content-type": ct }, frame(gzipSync(check("")), 1)],
  ["unknown coding", CHECK, { "content-type": ct, "grpc-encoding": "snappy" }, frame(check(""))],
  ["AppError", STATUS, { "content-type": ct, "x-case": "app-error" }, frame(emptyStatus)],
  ["Error", STATUS, { "content-type": ct, "x-case": "raw-error" }, frame(emptyStatus)],
  ["ConnectError", CHECK, { "content-type": ct }, frame(check("nope"))],
  ["bad proto", CHECK, { "content-type": ct }, frame(Buffer.from([0x0a, 0x09, 0x41]))],
  ["too large", CHECK, { "content-type": ct }, frame(Buffer.alloc(READ_MAX + 1))],
  ["no message", CHECK, { "content-type": ct }, Buffer.alloc(0)],
  ["two messages", CHECK, { "content-type": ct }, Buffer.concat([frame(check("")), frame(check(""))])],
  ["incomplete", CHECK, { "content-type": ct }, frame(check("")).subarray(0, 7)],
  ["deadline", STATUS, { "content-type": ct, "grpc-timeout": timeout, "x-case": "deadline" }, frame(emptyStatus)],
  ["bad timeout", STATUS, { "content-type": ct, "grpc-timeout": "1x" }, frame(emptyStatus)],
];

async function same(send: typeof h1, cases: Case[], fastPath: boolean): Promise<void> {
  for (const [name, path, headers, body] of cases) {
    const before = served;
    const withHeaders = { ...headers, "x-request-id": `req-${name.replace(/\W/g, "-")}` };
    const ours = await send(fast.port, path, withHeaders, body);
    expect(served - before, name).toBe(fastPath ? 1 : 0);
    const theirs = await send(plain.port, path, withHeaders, body);
    expect(ours, name).toEqual(theirs);
  }
}

describe("the unary fast path answers exactly as connect-es's handlers", () => {
  it("Connect over HTTP/1.1 and HTTP/2", async () => {
    await same(h1, connectCases, true);
    await same(h2, connectCases, true);
  });

  it("gRPC-Web over HTTP/1.1 (binary and JSON frames)", async () => {
    await same(h1, envelopedCases("application/grpc-web+proto", "30m"), true);
    await same(h1, envelopedCases("application/grpc-web", "30000u"), true);
    const json = Buffer.from('{"service":""}');
    const web = { "content-type": "application/grpc-web+json" };
    await same(h1, [["JSON", CHECK, web, frame(json)]], true);
    await same(
      h1,
      [["JSON, over writeMaxBytes", STATUS, { ...web, "x-case": "huge" }, frame(Buffer.from("{}"))]],
      true,
    );
  });

  it("gRPC over HTTP/2", async () => {
    await same(h2, envelopedCases("application/grpc", "30m"), true);
    await same(h2, envelopedCases("application/grpc+proto", "30000000n"), true);
  });

  it("a deadline that passes during the call is deadline_exceeded on every protocol, not internal", async () => {
    const connectAnswer = await h1(
      fast.port,
      STATUS,
      { "content-type": "application/json", "connect-timeout-ms": "50", "x-case": "deadline" },
      Buffer.from("{}"),
    );
    expect(connectAnswer.status).toBe(504);
    expect(Buffer.from(connectAnswer.body, "base64").toString()).toContain('"code":"deadline_exceeded"');
    const grpcAnswer = await h2(
      fast.port,
      STATUS,
      { "content-type": "application/grpc", "grpc-timeout": "50m", "x-case": "deadline" },
      frame(emptyStatus),
    );
    expect(grpcAnswer.trailers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
  });

  it("a client that goes away aborts the call's signal (gRPC stream reset, Connect connection closed)", async () => {
    const session = http2.connect(`http://127.0.0.1:${fast.port}`);
    const stream = session.request({
      ":method": "POST",
      ":path": STATUS,
      "content-type": "application/grpc",
      "x-case": "deadline",
      "x-request-id": "gone-grpc",
    });
    stream.on("error", () => {});
    stream.end(frame(emptyStatus));
    await new Promise((r) => setTimeout(r, 100));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    const req = http.request({ port: fast.port, host: "127.0.0.1", path: STATUS, method: "POST" });
    req.setHeader("content-type", "application/json");
    req.setHeader("x-case", "deadline");
    req.setHeader("x-request-id", "gone-connect");
    req.on("error", () => {});
    req.end("{}");
    await new Promise((r) => setTimeout(r, 100));
    req.destroy();
    try {
      await expect
        .poll(() => aborted.filter((id) => id.startsWith("gone-")).sort(), { timeout: 3000 })
        .toEqual(["gone-connect", "gone-grpc"]);
    } finally {
      session.close();
    }
  });

  it("leaves streams, GET, gRPC-Web text and gRPC over HTTP/1.1 to connect-es", async () => {
    const text = Buffer.from(frame(emptyStatus).toString("base64"));
    await same(h1, [["text", STATUS, { "content-type": "application/grpc-web-text" }, text]], false);
    await same(h1, [["grpc h1", STATUS, { "content-type": "application/grpc" }, frame(emptyStatus)]], false);
    await same(
      h1,
      [["stream", STATUS, { "content-type": "application/connect+json" }, frame(Buffer.from("{}"))]],
      false,
    );
  });
});

describe("a refused body on a keep-alive connection", () => {
  it("a chunked Connect body over the limit is answered, and the connection serves the next call", async () => {
    const socket = net.connect(fast.port, "127.0.0.1");
    let received = "";
    socket.on("data", (c: Buffer) => (received += c.toString("latin1")));
    const big = Buffer.alloc(READ_MAX * 256, 32);
    const small = '{"service":""}';
    socket.write(`POST ${CHECK} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`);
    socket.write("Transfer-Encoding: chunked\r\n\r\n");
    for (let i = 0; i < big.byteLength; i += 4096) socket.write(`1000\r\n${big.subarray(i, i + 4096).toString()}\r\n`);
    socket.write("0\r\n\r\n");
    socket.write(`POST ${CHECK} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`);
    socket.write(`Content-Length: ${small.length}\r\n\r\n${small}`);
    try {
      await expect.poll(() => received.match(/HTTP\/1\.1 \d{3}/g), { timeout: 5000 }).toHaveLength(2);
      expect(received.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 429", "HTTP/1.1 200"]);
      expect(received).toContain('"code":"resource_exhausted"');
    } finally {
      socket.destroy();
    }
  });
});

describe("real clients on the fast path", () => {
  it("connect-node's three transports get answers, headers, trailers, errors with details, deadlines", async () => {
    const baseUrl = `http://127.0.0.1:${fast.port}`;
    for (const transport of [
      createConnectTransport({ baseUrl, httpVersion: "1.1", sendCompression: connectCompressions[2]! }),
      createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl }),
    ]) {
      const before = served;
      const client = createClient(StatusService, transport);
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      const ok = await client.getStatus({}, { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
      expect(ok.status).toBe("operational");
      expect(ok.partnerApi).toBe("é");
      expect(header?.get("x-answer")).toBe("yes");
      expect(trailer?.get("x-trailer")).toBe("done");
      const big = await client.getStatus({}, { headers: { "x-case": "big" } });
      expect(big.status).toHaveLength(3000);
      const failed = await client.getStatus({}, { headers: { "x-case": "app-error" } }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(ConnectError);
      const err = failed as ConnectError;
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toBe("No such thing.");
      expect(err.metadata.get("x-error-code")).toBe("not_found");
      expect(err.details).toHaveLength(1);
      const started = performance.now();
      const late = await client.getStatus({}, { headers: { "x-case": "deadline" }, timeoutMs: 200 }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(late?.code).toBe(Code.DeadlineExceeded);
      expect(performance.now() - started).toBeGreaterThanOrEqual(150);
      expect(served - before).toBe(4);
    }
  });

  it("a @grpc/grpc-js client: answer, metadata, error status and a deadline", async () => {
    const Client = grpc.makeGenericClientConstructor({}, "x");
    const client = new Client(`127.0.0.1:${fast.port}`, grpc.credentials.createInsecure());
    const call = (metadata: grpc.Metadata, deadline?: number) =>
      new Promise<{ err: grpc.ServiceError | null; value?: Buffer; trailers?: grpc.Metadata }>((resolve) => {
        let trailers: grpc.Metadata | undefined;
        const c = client.makeUnaryRequest(
          STATUS,
          (b: Buffer) => b,
          (b: Buffer) => b,
          emptyStatus,
          metadata,
          deadline === undefined ? {} : { deadline: Date.now() + deadline },
          (err, value) => resolve({ err, ...(value ? { value } : {}), ...(trailers ? { trailers } : {}) }),
        );
        c.on("status", (s: grpc.StatusObject) => (trailers = s.metadata));
      });
    try {
      const before = served;
      const ok = await call(new grpc.Metadata());
      expect(ok.err).toBeNull();
      expect(ok.value!.byteLength).toBeGreaterThan(0);
      const error = new grpc.Metadata();
      error.set("x-case", "app-error");
      const failed = await call(error);
      expect(failed.err?.code).toBe(grpc.status.NOT_FOUND);
      expect(failed.err?.details).toBe("No such thing.");
      expect(failed.err?.metadata.get("grpc-status-details-bin")).toHaveLength(1);
      const slow = new grpc.Metadata();
      slow.set("x-case", "deadline");
      const late = await call(slow, 200);
      expect(late.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(served - before).toBe(3);
    } finally {
      client.close();
    }
  });
});
