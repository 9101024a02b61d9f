import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http2 from "node:http2";
import zlib from "node:zlib";
import * as grpc from "@grpc/grpc-js";
import { request } from "undici";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import {
  ConnectivityService,
  GetAvailabilityRequestSchema,
  GetAvailabilityResponseSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { stayInRoom } from "../../src/modules/reservations/index.ts";
import { createInventoryService } from "../../src/modules/inventory/index.ts";
import { connectCompressions } from "../../src/server/compression.ts";
import { PIECE_CHARS } from "../../src/gateway/codec-text.ts";
import { newId } from "../../src/lib/ids.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";

let app: TestApp;
let property: { code: string };
let token: string;
const range = { from: "2027-01-01", to: "2028-01-02" };

beforeAll(async () => {
  // answers rendered and compressed per request, streamed (a cached answer goes out as stored bytes with a
  // Content-Length: test/connectivity/availability-cache.test.ts)
  app = await startTestApp({ env: { ANSWER_CACHE_BYTES: "0" } });
  property = await createTestProperty(app, { businessDate: "2027-01-01" });
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  const p = await app.db.pool.query<{ id: string }>("select id from properties where code = $1", [property.code]);
  for (const code of ["DBL", "SGL", "TWN"])
    await inventory.createRoomType(p.rows[0]!.id, { code, name: code, maxOccupancy: 2 });
  token = (
    await createTestClient(app, {
      propertyCodes: [property.code],
      scopes: ["availability.read", "reservations.write"],
      approved: true,
    })
  ).accessToken;
});
afterAll(async () => {
  await app?.close();
});

const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });
const availabilityUrl = (): string =>
  `${app.baseUrl}/api/v1/properties/${property.code}/availability?from=${range.from}&to=${range.to}`;
const eventsUrl = (): string => `${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`;

/** The bytes on the wire (undici's request does not decode), decoded by us. */
async function raw(url: string, headers: Record<string, string>) {
  const res = await request(url, { headers });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const encoding = res.headers["content-encoding"] as string | undefined;
  const decoded =
    encoding === "gzip"
      ? zlib.gunzipSync(bytes)
      : encoding === "br"
        ? zlib.brotliDecompressSync(bytes)
        : encoding === "zstd"
          ? zlib.zstdDecompressSync(bytes)
          : bytes;
  return { status: res.statusCode, headers: res.headers, bytes, encoding, json: JSON.parse(decoded.toString("utf8")) };
}

describe("REST answers are compressed when the client accepts it", () => {
  it("gzip, br and zstd give the same JSON in far fewer bytes, with Vary: Accept-Encoding", async () => {
    const plain = await raw(availabilityUrl(), { ...auth(), "accept-encoding": "identity" });
    expect(plain.encoding).toBeUndefined();
    expect(plain.json.roomTypes).toHaveLength(3);
    // longer than one piece of text: written as it is rendered, without a Content-Length
    expect(plain.bytes.length).toBeGreaterThan(PIECE_CHARS);
    expect(plain.headers["content-length"]).toBeUndefined();
    expect(plain.headers.vary).toBe("Accept-Encoding");
    for (const coding of ["gzip", "br", "zstd"]) {
      const packed = await raw(availabilityUrl(), { ...auth(), "accept-encoding": coding });
      expect(packed.status).toBe(200);
      expect(packed.encoding).toBe(coding);
      expect(packed.headers.vary).toBe("Accept-Encoding");
      expect(packed.headers["content-length"]).toBeUndefined(); // streamed
      expect(packed.json).toEqual(plain.json);
      expect(packed.bytes.length).toBeLessThan(plain.bytes.length / 10);
    }
  });

  it("fetch (gzip, deflate) gets gzip and reads it transparently", async () => {
    const res = await fetch(availabilityUrl(), { headers: auth() });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(((await res.json()) as { roomTypes: unknown[] }).roomTypes).toHaveLength(3);
  });

  it("over HTTP/2 (h2c) too", async () => {
    const session = http2.connect(app.baseUrl);
    try {
      const { headers, body } = await new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }>(
        (resolve, reject) => {
          const stream = session.request({
            ":path": new URL(availabilityUrl()).pathname + new URL(availabilityUrl()).search,
            "accept-encoding": "br",
            ...auth(),
          });
          const chunks: Buffer[] = [];
          let headers: http2.IncomingHttpHeaders = {};
          stream.on("response", (h) => (headers = h));
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => resolve({ headers, body: Buffer.concat(chunks) }));
          stream.on("error", reject);
        },
      );
      expect(headers[":status"]).toBe(200);
      expect(headers["content-encoding"]).toBe("br");
      expect(JSON.parse(zlib.brotliDecompressSync(body).toString("utf8")).roomTypes).toHaveLength(3);
    } finally {
      session.close();
    }
  });

  it("answers Accept-Encoding: * with gzip, which every client that says * can read", async () => {
    const res = await raw(availabilityUrl(), { ...auth(), "accept-encoding": "*" });
    expect(res.encoding).toBe("gzip");
    expect(res.headers.vary).toBe("Accept-Encoding");
    // a coding the client names still wins over what only * allows
    expect((await raw(availabilityUrl(), { ...auth(), "accept-encoding": "zstd, *" })).encoding).toBe("zstd");
  });

  it("follows q-values, the server's order on ties, and q=0", async () => {
    const pick = async (accept: string) =>
      (await raw(availabilityUrl(), { ...auth(), "accept-encoding": accept })).encoding;
    expect(await pick("gzip;q=0.5, br")).toBe("br");
    expect(await pick("gzip, br, zstd")).toBe("zstd");
    expect(await pick("*, zstd;q=0")).toBe("gzip");
    expect(await pick("gzip;q=0, identity")).toBeUndefined();
    expect(await pick("deflate, compress")).toBeUndefined();
  });

  it("never compresses an answer under 1 KiB, nor HEAD", async () => {
    const small = await raw(`${app.baseUrl}/api/v1/status`, { "accept-encoding": "gzip, br, zstd" });
    expect(small.status).toBe(200);
    expect(small.encoding).toBeUndefined();
    expect(small.bytes.length).toBeLessThan(1024);
    expect(small.headers.vary).toBe("Accept-Encoding");
    const head = await request(availabilityUrl(), {
      method: "HEAD",
      headers: { ...auth(), "accept-encoding": "gzip" },
    });
    await head.body.dump();
    expect(head.headers["content-encoding"]).toBeUndefined();
    expect(Number(head.headers["content-length"])).toBeGreaterThan(1024);
  });
});

describe("REST request bodies with Content-Encoding", () => {
  const event = (ref: string) => JSON.stringify({ eventType: "CANCELLED", externalReference: ref });
  const post = (body: Uint8Array, encoding: string) =>
    fetch(eventsUrl(), {
      method: "POST",
      headers: {
        ...auth(),
        "content-type": "application/json",
        "content-encoding": encoding,
        "idempotency-key": newId(),
      },
      body,
    });

  it("gzip, br and zstd bodies are read", async () => {
    for (const [coding, pack] of [
      ["gzip", zlib.gzipSync],
      ["br", zlib.brotliCompressSync],
      ["zstd", zlib.zstdCompressSync],
    ] as const) {
      const res = await post(pack(Buffer.from(event(`Z-${coding}`))), coding);
      expect(res.status, coding).toBe(202);
    }
  });

  it("a zip bomb is refused with 413 and our error body, without being inflated", async () => {
    // 64 MiB of zeros in about 64 KiB of gzip, far below MAX_BODY_BYTES (1 MiB) as sent
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const started = performance.now();
    const res = await post(bomb, "gzip");
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("payload_too_large");
    expect(body.error.message).toMatch(/decompressed/);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("an unknown coding is 415, corrupt gzip is 400", async () => {
    const unknown = await post(Buffer.from(event("Z-x")), "compress");
    expect(unknown.status).toBe(415);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    const corrupt = await post(Buffer.from("this is not gzip at all"), "gzip");
    expect(corrupt.status).toBe(400);
    expect(((await corrupt.json()) as { error: { code: string } }).error.code).toBe("invalid_argument");
  });
});

const request$ = { propertyCode: "", ...range };

describe("Connect, gRPC and gRPC-Web: compressed messages both ways", () => {
  const headers = (): Headers => new Headers(auth());
  const clients = (): [string, Transport][] => [
    [
      "connect",
      createConnectTransport({
        baseUrl: app.baseUrl,
        httpVersion: "1.1",
        sendCompression: compressionGzip,
        compressMinBytes: 1,
      }),
    ],
    ["grpc", createGrpcTransport({ baseUrl: app.baseUrl, sendCompression: compressionGzip, compressMinBytes: 1 })],
    [
      "grpc-web",
      createGrpcWebTransport({
        baseUrl: app.baseUrl,
        httpVersion: "1.1",
        sendCompression: compressionGzip,
        compressMinBytes: 1,
      }),
    ],
  ];

  it("connect-node clients send gzip and get the large answer compressed", async () => {
    for (const [name, transport] of clients()) {
      let encoding: string | null = null;
      const client = createClient(ConnectivityService, transport);
      const res = await client.getAvailability(
        { ...request$, propertyCode: property.code },
        {
          headers: headers(),
          onHeader: (h) => (encoding = h.get("content-encoding") ?? h.get("grpc-encoding")),
        },
      );
      expect(
        res.roomTypes.map((r) => r.days.length),
        name,
      ).toEqual([366, 366, 366]);
      expect(encoding, name).toBe("gzip");
    }
  });

  it("Connect over fetch: Accept-Encoding picks the coding, a small answer stays plain", async () => {
    const call = (path: string, body: unknown, accept: string) =>
      request(`${app.baseUrl}${path}`, {
        method: "POST",
        headers: { ...auth(), "content-type": "application/json", "accept-encoding": accept },
        body: JSON.stringify(body),
      });
    const big = await call(
      "/hotelops.connectivity.v1.ConnectivityService/GetAvailability",
      { ...request$, propertyCode: property.code },
      "zstd",
    );
    expect(big.statusCode).toBe(200);
    expect(big.headers["content-encoding"]).toBe("zstd");
    const json = JSON.parse(zlib.zstdDecompressSync(Buffer.from(await big.body.arrayBuffer())).toString("utf8"));
    expect(json.roomTypes).toHaveLength(3);
    const small = await call("/hotelops.status.v1.StatusService/GetStatus", {}, "gzip");
    expect(small.headers["content-encoding"]).toBeUndefined();
    await small.body.dump();
  });

  it("a zip bomb is resource_exhausted on Connect and gRPC, without being inflated", async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const connect = await request(`${app.baseUrl}/hotelops.connectivity.v1.ConnectivityService/GetAvailability`, {
      method: "POST",
      headers: { ...auth(), "content-type": "application/proto", "content-encoding": "gzip" },
      body: bomb,
    });
    expect(((await connect.body.json()) as { code: string }).code).toBe("resource_exhausted");
    const frame = Buffer.alloc(5 + bomb.length);
    frame[0] = 1; // compressed
    frame.writeUInt32BE(bomb.length, 1);
    bomb.copy(frame, 5);
    const started = performance.now();
    expect(await grpcStatus(frame, { "grpc-encoding": "gzip" })).toBe(String(Code.ResourceExhausted));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("a real @grpc/grpc-js client with gzip as its default compression", async () => {
    const client = new grpc.Client(`127.0.0.1:${app.port}`, grpc.credentials.createInsecure(), {
      "grpc.default_compression_algorithm": 2, // gzip
    });
    try {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${token}`);
      const bytes = await new Promise<Uint8Array>((resolve, reject) => {
        client.makeUnaryRequest(
          "/hotelops.connectivity.v1.ConnectivityService/GetAvailability",
          (m: Uint8Array) => Buffer.from(m),
          (b: Buffer) => new Uint8Array(b),
          toBinary(
            GetAvailabilityRequestSchema,
            create(GetAvailabilityRequestSchema, { ...request$, propertyCode: property.code }),
          ),
          metadata,
          (err, value) => (err || !value ? reject(err ?? new Error("no value")) : resolve(value)),
        );
      });
      expect(fromBinary(GetAvailabilityResponseSchema, bytes).roomTypes).toHaveLength(3);
    } finally {
      client.close();
    }
  });

  it("on the wire, gRPC answers with grpc-encoding gzip and a compressed frame", async () => {
    const message = toBinary(
      GetAvailabilityRequestSchema,
      create(GetAvailabilityRequestSchema, { ...request$, propertyCode: property.code }),
    );
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    const answer = await grpcCall(frame, { "grpc-accept-encoding": "gzip" });
    expect(answer.headers["grpc-encoding"]).toBe("gzip");
    expect(answer.body[0]).toBe(1); // the compressed flag
    const length = answer.body.readUInt32BE(1);
    const decoded = fromBinary(GetAvailabilityResponseSchema, zlib.gunzipSync(answer.body.subarray(5, 5 + length)));
    expect(decoded.roomTypes).toHaveLength(3);
    expect(length).toBeLessThan(toBinaryLength(decoded) / 5);
  });

  it("the Connect client accepts every coding the server offers", async () => {
    const transport = createConnectTransport({
      baseUrl: app.baseUrl,
      httpVersion: "2",
      acceptCompression: connectCompressions.filter((c) => c.name === "br"),
      sendCompression: connectCompressions.find((c) => c.name === "zstd")!,
      compressMinBytes: 1,
    });
    let encoding: string | null = null;
    const res = await createClient(ConnectivityService, transport).getAvailability(
      { ...request$, propertyCode: property.code },
      { headers: headers(), onHeader: (h) => (encoding = h.get("content-encoding")) },
    );
    expect(res.roomTypes).toHaveLength(3);
    expect(encoding).toBe("br");
    const wrong = createClient(
      ConnectivityService,
      createConnectTransport({
        baseUrl: app.baseUrl,
        httpVersion: "1.1",
        sendCompression: { ...compressionGzip, name: "lz4" },
        compressMinBytes: 1,
      }),
    );
    await expect(
      wrong.getAvailability({ ...request$, propertyCode: property.code }, { headers: headers() }),
    ).rejects.toSatisfy((e: unknown) => ConnectError.from(e).code === Code.Unimplemented);
  });
});

function toBinaryLength(m: Parameters<typeof toBinary<typeof GetAvailabilityResponseSchema>>[1]): number {
  return toBinary(GetAvailabilityResponseSchema, m).length;
}

async function grpcCall(
  frame: Buffer,
  extra: Record<string, string>,
): Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer; status: string | undefined }> {
  const session = http2.connect(app.baseUrl);
  try {
    return await new Promise((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/hotelops.connectivity.v1.ConnectivityService/GetAvailability",
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${token}`,
        ...extra,
      });
      let headers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let status: string | undefined;
      stream.on("response", (h) => {
        headers = h;
        status = h["grpc-status"] as string | undefined;
      });
      stream.on("trailers", (t) => (status = t["grpc-status"] as string | undefined));
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve({ headers, body: Buffer.concat(chunks), status }));
      stream.on("error", reject);
      stream.end(frame);
    });
  } finally {
    session.close();
  }
}

async function grpcStatus(frame: Buffer, extra: Record<string, string>): Promise<string | undefined> {
  return (await grpcCall(frame, extra)).status;
}
