import http from "node:http";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { timestampFromDate, timestampDate } from "@bufbuild/protobuf/wkt";
import { create, type JsonValue } from "@bufbuild/protobuf";
import { request } from "undici";
import zlib from "node:zlib";
import {
  GatewayTestService,
  Color,
  SearchThingsRequestSchema,
  SearchThingsResponseSchema,
  type SearchThingsRequest,
  type Thing,
} from "../gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { render } from "../../src/gateway/codec.ts";
import { PIECE_CHARS } from "../../src/gateway/codec-text.ts";
import { createGateway } from "../../src/gateway/index.ts";
import { createRecordingRouter } from "../../src/server/calls.ts";
import { createDispatcher } from "../../src/server/dispatch.ts";
import { createCallInterceptor } from "../../src/server/interceptors.ts";
import { listen, type Listener } from "../../src/server/listen.ts";
import { AppError, type ErrorCode } from "../../src/errors.ts";

// The gateway on a real socket in front of a test service that echoes what it received.
let listener: Listener;
let base: string;
const created = new Date("2026-11-22T09:30:00.123Z");
/** Ids of getThing calls whose signal aborted (id "wait-*" waits for it). */
const aborted: string[] = [];

beforeAll(async () => {
  const logger = pino({ level: "silent" });
  const router = createRecordingRouter({ interceptors: [createCallInterceptor(logger)] });
  router.service(GatewayTestService, {
    getThing: async (req, ctx) => {
      const id = req.thing?.id ?? "";
      if (id.startsWith("wait-"))
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => (aborted.push(id), resolve())));
      return getThingAnswer(req);
    },
    createThing: (req) => ({ ...(req.thing as Thing), name: `${req.propertyCode}:${req.thing?.name}:${req.dryRun}` }),
    updateThing: (req) => ({
      id: req.id,
      name: req.name,
      amountMinor: req.amountMinor,
      createdAt: req.createdAt,
      color: req.color,
      ...(req.note !== undefined ? { note: req.note } : {}),
    }),
    deleteThing: () => ({}),
    searchThings: (req) => searchAnswer(req),
    fileThing: (req) => ({ path: req.path, content: req.content }),
    submitForm: (req) => {
      if (req.grantType !== "client_credentials")
        throw new AppError("invalid_argument", "grant_type must be client_credentials", {
          headers: { "x-oauth-error": "unsupported_grant_type" },
        });
      return { accessToken: "tok", scope: req.scope, count: req.count };
    },
    upload: (req) => ({
      documentType: req.documentType,
      sizes: req.images.map((i) => i.content.length),
      contentTypes: req.images.map((i) => i.contentType),
    }),
    fail: (req) => {
      if (req.code === "boom") throw new Error("secret internals: SELECT * FROM x");
      throw new AppError(req.code as ErrorCode, `failed with ${req.code}`, { retryAfterSeconds: 7 });
    },
  });
  const gateway = createGateway({ ...router.direct, maxBodyBytes: 1024, maxFileBytes: 2048 });
  listener = await listen(createDispatcher({ handlers: router.handlers, gateway, ready: async () => true, logger }), {
    port: 0,
    host: "127.0.0.1",
  });
  base = `http://127.0.0.1:${listener.port}`;
});
afterAll(async () => {
  await listener?.close(100);
});

function getThingAnswer(req: { thing?: { id: string } | undefined; propertyCode: string; verbose: boolean }) {
  return {
    id: req.thing?.id ?? "",
    name: `${req.propertyCode}|${req.verbose}`,
    createdAt: timestampFromDate(created),
    amountMinor: 9007199254740991n,
  };
}

function searchAnswer(req: SearchThingsRequest) {
  return {
    // a limit of 1000 or more asks for that many things: a long answer
    things: Array.from({ length: req.limit >= 1000 ? req.limit : 1 }, (_, i) => ({
      id: String(i + 1),
      tags: req.tags,
      count: req.counts.reduce((a, b) => a + b, 0),
      name: `${req.parent?.id}|${Color[req.color]}|${req.active}|${req.limit}`,
      amountMinor: req.minAmount,
      ...(req.updatedSince ? { createdAt: req.updatedSince } : {}),
    })),
    nextCursor: "c",
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;
const json = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("a client that goes away", () => {
  it("aborts the call's signal: an HTTP/2 stream reset and a closed HTTP/1.1 connection", async () => {
    const session = http2.connect(base);
    session.on("error", () => undefined);
    const stream = session.request({ ":method": "GET", ":path": "/t/v1/things/wait-h2" });
    stream.on("error", () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    const req = http.get(`${base}/t/v1/things/wait-h1`);
    req.on("error", () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    req.destroy();
    try {
      await expect.poll(() => [...aborted].sort(), { timeout: 3000 }).toEqual(["wait-h1", "wait-h2"]);
    } finally {
      session.close();
    }
  });
});

describe("path templates", () => {
  it("binds path variables including nested fields, and query parameters", async () => {
    const res = await fetch(`${base}/t/v1/properties/DEMO-IST/things/th%2F1?verbose=true`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.id).toBe("th/1");
    expect(body.name).toBe("DEMO-IST|true");
  });

  it("serves additional_bindings", async () => {
    const body = (await (await fetch(`${base}/t/v1/things/abc`)).json()) as Json;
    expect(body.id).toBe("abc");
  });

  it("reads a request target as the URL parser does: dot segments resolved, a fragment dropped", async () => {
    // fetch() would normalise the target itself: sent as written with node:http
    const get = (target: string) =>
      new Promise<{ status: number; body: Json }>((resolve, reject) => {
        http
          .get(`${base}${target}`, (res) => {
            let text = "";
            res.on("data", (c: Buffer) => (text += c.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Json }));
          })
          .on("error", reject);
      });
    const dotted = await get("/t/v1/other/../things/./abc?verbose=true");
    expect(dotted.status).toBe(200);
    expect(dotted.body.id).toBe("abc");
    const plain = await get("/t/v1/properties/DEMO-IST/things/abc?verbose=true#frag");
    expect(plain.body.name).toBe("DEMO-IST|true");
  });

  it("binds {var=**} to the rest of the path", async () => {
    const res = await fetch(`${base}/t/v1/files/a/b/c.txt`, json({ content: "x" }));
    expect(await res.json()).toEqual({ path: "a/b/c.txt", content: "x" });
  });
});

describe("JSON rendering", () => {
  it("renders int64 as numbers, timestamps with milliseconds, unset optional/message/wrapper fields as null, defaults, enums by short name", async () => {
    const body = (await (await fetch(`${base}/t/v1/things/x`)).json()) as Json;
    expect(body).toEqual({
      id: "x",
      name: "|false",
      amountMinor: 9007199254740991,
      createdAt: "2026-11-22T09:30:00.123Z",
      note: null,
      channel: null,
      color: null,
      tags: [],
      active: false,
      count: 0,
      parent: null,
      totals: {},
      palette: [],
    });
  });

  it("round-trips enums, optional, wrappers, maps and nested messages through body: field", async () => {
    const thing = {
      id: "t1",
      name: "n",
      amountMinor: 12345,
      createdAt: "2026-01-02T03:04:05Z",
      note: "hi",
      channel: "BOOKING",
      color: "DEEP_BLUE",
      tags: ["a"],
      active: true,
      count: 3,
      parent: { id: "p" },
      totals: { a: 5 },
      palette: ["RED", "COLOR_DEEP_BLUE"],
    };
    const res = await fetch(`${base}/t/v1/properties/P1/things?dryRun=true`, json(thing));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      ...thing,
      name: "P1:n:true",
      createdAt: "2026-01-02T03:04:05.000Z",
      palette: ["RED", "DEEP_BLUE"],
    });
  });

  it("serves body: '*' with path variables", async () => {
    const res = await fetch(`${base}/t/v1/things/u1`, {
      ...json({ name: "renamed", amountMinor: -5, color: "RED" }),
      method: "PATCH",
    });
    expect(await res.json()).toMatchObject({ id: "u1", name: "renamed", amountMinor: -5, color: "RED", note: null });
  });

  it("applies response_body and query forms (repeated, comma list, nested, enum, bool, int64, timestamp)", async () => {
    const q =
      "tags=a&tags=b,c&counts=1,2&counts=3&parent.id=P&color=DEEP_BLUE&active=true&minAmount=42&limit=7&updatedSince=2026-03-01T00:00:00Z";
    const res = await fetch(`${base}/t/v1/things?${q}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(Array.isArray(body)).toBe(true);
    expect(body[0]).toMatchObject({
      tags: ["a", "b", "c"],
      count: 6,
      name: "P|DEEP_BLUE|true|7",
      amountMinor: 42,
      createdAt: "2026-03-01T00:00:00.000Z",
    });
  });

  it("writes a long answer in pieces as the client reads it (no Content-Length), the same text as a whole rendering", async () => {
    const url = `${base}/t/v1/things?limit=3000&tags=a,b&parent.id=P&minAmount=7`;
    const whole = JSON.stringify(
      (
        render(
          SearchThingsResponseSchema,
          searchAnswer(
            create(SearchThingsRequestSchema, { limit: 3000, tags: ["a", "b"], parent: { id: "P" }, minAmount: 7n }),
          ),
        ) as { things: JsonValue }
      ).things,
    );
    expect(whole.length).toBeGreaterThan(4 * PIECE_CHARS);
    const plain = await request(url);
    const chunks: Buffer[] = [];
    for await (const chunk of plain.body) chunks.push(chunk as Buffer);
    expect(plain.headers["transfer-encoding"]).toBe("chunked");
    expect(plain.headers["content-length"]).toBeUndefined();
    expect(Buffer.concat(chunks).toString("utf8")).toBe(whole);
    const packed = await request(url, { headers: { "accept-encoding": "zstd" } });
    expect(packed.headers["content-encoding"]).toBe("zstd");
    expect(zlib.zstdDecompressSync(Buffer.from(await packed.body.arrayBuffer())).toString("utf8")).toBe(whole);
    const head = await request(url, { method: "HEAD" });
    await head.body.dump();
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(whole)));
  });

  it("answers 204 with no body", async () => {
    const res = await fetch(`${base}/t/v1/things/d1`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
  });
});

describe("bad input", () => {
  const expectError = async (res: Response, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe(code);
    expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
    return body.error;
  };

  it("404 for an unknown path", async () => {
    await expectError(await fetch(`${base}/t/v1/nothing`), 404, "not_found");
  });

  it("405 with Allow for a wrong method", async () => {
    const res = await fetch(`${base}/t/v1/things/x`, { method: "PUT" });
    const err = await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("DELETE, GET, PATCH");
    expect(err.message).toMatch(/PUT/);
  });

  it("400 with details naming the field", async () => {
    const err = await expectError(
      await fetch(`${base}/t/v1/things/u1`, {
        ...json({ amountMinor: "12", color: "GREEN", nope: 1, createdAt: "yesterday" }),
        method: "PATCH",
      }),
      400,
      "invalid_argument",
    );
    const fields = err.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(["amountMinor", "color", "createdAt", "nope"]);
  });

  it("400 for malformed JSON, non-object JSON and bad query values", async () => {
    await expectError(
      await fetch(`${base}/t/v1/things/u1`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: "{bad",
      }),
      400,
      "invalid_argument",
    );
    await expectError(
      await fetch(`${base}/t/v1/things/u1`, { ...json([1]), method: "PATCH" }),
      400,
      "invalid_argument",
    );
    const err = await expectError(await fetch(`${base}/t/v1/things?limit=ten&unknown=1`), 400, "invalid_argument");
    expect(err.details.map((d: { field: string }) => d.field).sort()).toEqual(["limit", "unknown"]);
  });

  it("rejects int64 beyond 2^53", async () => {
    const err = await expectError(
      await fetch(`${base}/t/v1/things/u1`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: `{"amountMinor":9007199254740993}`,
      }),
      400,
      "invalid_argument",
    );
    expect(err.details[0].field).toBe("amountMinor");
  });

  it("415 for a non-JSON body on a JSON route", async () => {
    await expectError(
      await fetch(`${base}/t/v1/things/u1`, { method: "PATCH", headers: { "content-type": "text/plain" }, body: "x" }),
      415,
      "unsupported_media_type",
    );
  });

  it("413 for a body over the limit", async () => {
    await expectError(
      await fetch(`${base}/t/v1/things/u1`, { ...json({ name: "x".repeat(5000) }), method: "PATCH" }),
      413,
      "payload_too_large",
    );
  });

  it("maps AppError codes to statuses, with Retry-After", async () => {
    for (const [code, status] of [
      ["not_found", 404],
      ["conflict", 409],
      ["forbidden", 403],
      ["rate_limited", 429],
      ["unavailable", 503],
    ] as const) {
      const res = await fetch(`${base}/t/v1/fail/${code}`, { method: "POST" });
      await expectError(res, status, code);
      expect(res.headers.get("retry-after")).toBe("7");
    }
    const unauthorized = await fetch(`${base}/t/v1/fail/unauthorized`, { method: "POST" });
    expect(unauthorized.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("hides internals of unexpected errors behind 500 internal", async () => {
    const err = await expectError(await fetch(`${base}/t/v1/fail/boom`, { method: "POST" }), 500, "internal");
    expect(err.message).toBe("Internal error.");
  });
});

describe("form and multipart adapters", () => {
  it("accepts application/x-www-form-urlencoded where declared, with snake_case json names", async () => {
    const res = await fetch(`${base}/t/v1/form`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&scope=a+b&count=3",
    });
    expect(await res.json()).toEqual({ access_token: "tok", scope: "a b", count: 3 });
  });

  it("uses the oauth2 error style and refuses JSON on a form route", async () => {
    const bad = await fetch(`${base}/t/v1/form`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=password",
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: "unsupported_grant_type",
      error_description: "grant_type must be client_credentials",
    });
    // RFC 6749: every OAuth error is 400 (or 401), also for a JSON body
    const jsonBody = await fetch(`${base}/t/v1/form`, json({ grant_type: "client_credentials" }));
    expect(jsonBody.status).toBe(400);
    expect(((await jsonBody.json()) as Json).error).toBe("invalid_request");
  });

  it("ignores unknown form parameters and refuses a repeated one", async () => {
    const extra = await fetch(`${base}/t/v1/form`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&unknown=1&scope=a",
    });
    expect(extra.status).toBe(200);
    const twice = await fetch(`${base}/t/v1/form`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&scope=a&scope=b",
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as Json).error).toBe("invalid_request");
  });

  it("maps multipart text parts and files", async () => {
    const form = new FormData();
    form.set("documentType", "PASSPORT");
    form.append("images", new Blob([new Uint8Array(100)], { type: "image/png" }), "a.png");
    form.append("images", new Blob([new Uint8Array(200)], { type: "image/jpeg" }), "b.jpg");
    const res = await fetch(`${base}/t/v1/upload`, { method: "POST", body: form });
    expect(await res.json()).toEqual({
      documentType: "PASSPORT",
      sizes: [100, 200],
      contentTypes: ["image/png", "image/jpeg"],
    });
  });

  it("413 as soon as a file passes its limit", async () => {
    const form = new FormData();
    form.append("images", new Blob([new Uint8Array(4096)], { type: "image/png" }), "big.png");
    const res = await fetch(`${base}/t/v1/upload`, { method: "POST", body: form });
    expect(res.status).toBe(413);
    expect(((await res.json()) as Json).error.code).toBe("payload_too_large");
  });
});

describe("timestamps", () => {
  it("truncates to exactly three fraction digits", async () => {
    const res = await fetch(`${base}/t/v1/things/u1`, {
      ...json({ createdAt: "2026-11-22T09:30:00.123456789Z" }),
      method: "PATCH",
    });
    const body = (await res.json()) as Json;
    expect(body.createdAt).toBe("2026-11-22T09:30:00.123Z");
    expect(timestampDate(timestampFromDate(new Date(body.createdAt))).toISOString()).toBe(body.createdAt);
  });
});
