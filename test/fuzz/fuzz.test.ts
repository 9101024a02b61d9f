import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import http2 from "node:http2";
import fc from "fast-check";
import { fromJson, toBinary, type DescMethod } from "@bufbuild/protobuf";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestClient, createTestProperty } from "../helpers/auth.ts";
import { bodyText, messageJson, pathValue } from "./arbitraries.ts";
import type { Route } from "../../src/gateway/index.ts";

/**
 * Fuzzing from the outside, driven by the descriptors and the gateway's route table: every REST route and every
 * unary RPC over Connect (JSON and protobuf) and gRPC gets hostile input, with and without credentials. The
 * server must never answer 5xx (gRPC: Unknown, Internal, DataLoss), never hang, always answer REST errors with our
 * error body, and be healthy afterwards. FUZZ_RUNS (cases per face, default 1000) and FUZZ_SEED change the run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const TIMEOUT_MS = 10_000;
const MAX_BODY = 64 * 1024;
const BAD_GRPC = new Set(["2", "13", "15"]);

let app: TestApp;
let routes: Route[];
let methods: DescMethod[];
let credentials: string[];
let session: http2.ClientHttp2Session;
const counts = { rest: 0, connectJson: 0, connectProto: 0, grpc: 0, byStatus: new Map<string, number>() };

beforeAll(async () => {
  app = await startTestApp({ env: { MAX_BODY_BYTES: String(MAX_BODY) } });
  const p = await createTestProperty(app);
  const staff = await createStaffSession(app, { propertyCode: p.code, role: "manager" });
  const partner = await createTestClient(app, {
    propertyCodes: [p.code],
    scopes: ["availability.read", "reservations.read", "reservations.write", "mappings.read"],
  });
  // The partner's own per-minute limit would answer most of its cases with 429.
  await app.db.pool.query("update api_clients set rate_limit_per_minute = 1000000 where id = $1", [partner.clientId]);
  credentials = [
    "",
    `Bearer ${staff.accessToken}`,
    `Bearer ${partner.accessToken}`,
    "Bearer not.a.token",
    "Basic AAAA",
  ];
  routes = [...app.gateway!.routes];
  methods = [...new Set(routes.map((r) => r.method))];
  // RPCs without a REST binding are fuzzed too (the gRPC/Connect-only services): every unary RPC of the contract.
  for (const m of await contractMethods())
    if (!methods.some((x) => x.parent.typeName === m.parent.typeName && x.name === m.name)) methods.push(m);
  session = http2.connect(app.baseUrl);
  session.on("error", () => undefined);
}, 60_000);
afterAll(async () => {
  session?.destroy();
  await app?.close();
  const statuses = [...counts.byStatus.entries()]
    .sort()
    .map(([k, v]) => `${k}:${v}`)
    .join(" ");
  console.log(
    `fuzz: seed ${SEED}, REST ${counts.rest}, Connect JSON ${counts.connectJson}, Connect proto ${counts.connectProto}, gRPC ${counts.grpc}; statuses ${statuses}`,
  );
});

const tally = (face: string, status: string | number): void => {
  const k = `${face}/${status}`;
  counts.byStatus.set(k, (counts.byStatus.get(k) ?? 0) + 1);
};

/**
 * One HTTP/1.1 request with node:http, not fetch: the test setup checks every fetch exchange against the OpenAPI
 * document, and fuzz requests break the document on purpose (the server's answers are what is asserted here).
 */
function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: init.method ?? "GET", headers: init.headers ?? {}, timeout: TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${url} hung`)));
    req.on("error", reject);
    req.end(init.body);
  });
}

function grpcCall(
  path: string,
  payload: Uint8Array,
  authorization: string,
): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
    };
    if (authorization !== "") headers.authorization = authorization;
    const stream = session.request(headers);
    const timer = setTimeout(() => (stream.close(), reject(new Error(`gRPC ${path} hung`))), TIMEOUT_MS);
    let status = "";
    let message = "";
    stream.on("response", (h) => {
      if (h["grpc-status"] !== undefined) status = String(h["grpc-status"]);
      message = decodeURIComponent(String(h["grpc-message"] ?? ""));
    });
    stream.on("trailers", (t) => {
      status = String(t["grpc-status"] ?? status);
      message = decodeURIComponent(String(t["grpc-message"] ?? message));
    });
    stream.on("data", () => undefined);
    stream.on("error", (err) => (clearTimeout(timer), reject(err)));
    stream.on("close", () => (clearTimeout(timer), resolve({ status, message })));
    const frame = Buffer.alloc(5 + payload.byteLength);
    frame.writeUInt32BE(payload.byteLength, 1);
    frame.set(payload, 5);
    stream.end(frame);
  });
}

async function contractMethods(): Promise<DescMethod[]> {
  const root = new URL("../../gen/hotelops/", import.meta.url);
  const found: DescMethod[] = [];
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith("_pb.js")) continue;
    for (const value of Object.values(
      (await import(new URL(file, root).href)) as Record<string, { kind?: string; methods?: DescMethod[] }>,
    )) {
      if (value?.kind === "service") found.push(...(value.methods ?? []).filter((m) => m.methodKind === "unary"));
    }
  }
  return found;
}

const rpcPath = (m: DescMethod): string => `/${m.parent.typeName}/${m.name}`;

/** Protobuf bytes: random garbage, or a real encoding of a hostile (but encodable) message. */
function protoBytes(m: DescMethod): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc.constantFrom(
      new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      new Uint8Array([0xff]),
      new Uint8Array([0x08]),
      new Uint8Array([0x12, 0x05, 0x61]),
    ),
    messageJson(m.input).map((json) => {
      try {
        return toBinary(m.input, fromJson(m.input, json as never, { ignoreUnknownFields: true }));
      } catch {
        return new Uint8Array([0x0a, 0x01, 0x00]);
      }
    }),
  );
}

function restCase(): fc.Arbitrary<{ route: Route; path: string; query: string; body: string; auth: string }> {
  return fc.constantFrom(...routes).chain((route) =>
    fc.record({
      route: fc.constant(route),
      path: fc.array(pathValue, { minLength: 8, maxLength: 8 }).map((values) => {
        let i = 0;
        return route.template.source.replace(/\{[^}]+\}/g, () => values[i++] ?? "x");
      }),
      query: fc
        .dictionary(
          fc.constantFrom(
            "from",
            "to",
            "limit",
            "cursor",
            "updatedSince",
            "year",
            "month",
            "roomTypes",
            "status",
            "arrivalDate",
            "departureDate",
            "adults",
          ),
          pathValue,
          { maxKeys: 4 },
        )
        .map((q) =>
          Object.entries(q)
            .map(([k, v]) => `${k}=${v}`)
            .join("&"),
        ),
      body: bodyText(route.method.input, MAX_BODY),
      auth: fc.constantFrom(...credentials),
    }),
  );
}

/** A failure names the case briefly (bodies can be megabytes) and how to replay it. */
const params = (): fc.Parameters<unknown> => ({
  seed: SEED,
  numRuns: RUNS,
  endOnFailure: true,
  reporter: (out) => {
    if (!out.failed) return;
    const example = JSON.stringify(out.counterexample, (k, v: unknown) => {
      if (k === "route") return `${(v as Route).httpMethod} ${(v as Route).template.source}`;
      if (k === "m") return rpcPath(v as DescMethod);
      if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
      return typeof v === "string" && v.length > 200 ? `${v.slice(0, 200)}...(${v.length} chars)` : v;
    });
    const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
    throw new Error(
      `fuzz case failed (seed ${out.seed}, path ${out.counterexamplePath}): ${cause.slice(0, 1500)}\ncase: ${example?.slice(0, 1500)}`,
    );
  },
});

describe("fuzz (fast-check, fixed seed)", () => {
  it(
    "REST: every route, hostile paths, queries and bodies: never 5xx, never a hang, our error body",
    { timeout: 600_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(restCase(), async (c) => {
          const headers: Record<string, string> = {
            "content-type": c.route.rest.requestContentTypes.includes("application/x-www-form-urlencoded")
              ? "application/x-www-form-urlencoded"
              : "application/json",
          };
          if (c.auth !== "") headers.authorization = c.auth;
          const hasBody = c.route.httpMethod !== "GET" && c.route.httpMethod !== "DELETE";
          const res = await call(`${app.baseUrl}${c.path}${c.query === "" ? "" : `?${c.query}`}`, {
            method: c.route.httpMethod,
            headers,
            ...(hasBody ? { body: c.body } : {}),
          });
          counts.rest++;
          tally("rest", res.status);
          expect(res.status, `${c.route.httpMethod} ${c.path}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.contentType).toMatch(/^application\/json/);
            const body = JSON.parse(res.text) as { error: unknown };
            // Headers too large (431) are refused while parsing, before any route is known: always our body.
            if (c.route.rest.errorStyle === "oauth2" && res.status !== 431) expect(typeof body.error).toBe("string");
            else
              expect(body.error).toMatchObject({
                code: expect.any(String),
                message: expect.any(String),
                requestId: expect.any(String),
              });
          }
        }),
        params(),
      );
    },
  );

  it("Connect JSON: every unary RPC, hostile bodies: never 5xx, never a hang", { timeout: 600_000 }, async () => {
    const arb = fc
      .constantFrom(...methods)
      .chain((m) =>
        fc.record({ m: fc.constant(m), body: bodyText(m.input, MAX_BODY), auth: fc.constantFrom(...credentials) }),
      );
    await fc.assert(
      fc.asyncProperty(arb, async ({ m, body, auth }) => {
        const res = await call(`${app.baseUrl}${rpcPath(m)}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(auth !== "" ? { authorization: auth } : {}) },
          body,
        });
        counts.connectJson++;
        tally("connect-json", res.status);
        expect(res.status, `${rpcPath(m)}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status >= 400) expect(JSON.parse(res.text)).toMatchObject({ code: expect.any(String) });
      }),
      params(),
    );
  });

  it(
    "Connect protobuf: malformed and hostile binary bodies: never 5xx, never a hang",
    { timeout: 600_000 },
    async () => {
      const arb = fc
        .constantFrom(...methods)
        .chain((m) => fc.record({ m: fc.constant(m), bytes: protoBytes(m), auth: fc.constantFrom(...credentials) }));
      await fc.assert(
        fc.asyncProperty(arb, async ({ m, bytes, auth }) => {
          const res = await call(`${app.baseUrl}${rpcPath(m)}`, {
            method: "POST",
            headers: { "content-type": "application/proto", ...(auth !== "" ? { authorization: auth } : {}) },
            body: bytes,
          });
          counts.connectProto++;
          tally("connect-proto", res.status);
          expect(res.status, `${rpcPath(m)}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
        }),
        params(),
      );
    },
  );

  it(
    "gRPC (h2c): malformed and hostile messages: never Unknown/Internal/DataLoss, never a hang",
    { timeout: 600_000 },
    async () => {
      const arb = fc
        .constantFrom(...methods)
        .chain((m) => fc.record({ m: fc.constant(m), bytes: protoBytes(m), auth: fc.constantFrom(...credentials) }));
      await fc.assert(
        fc.asyncProperty(arb, async ({ m, bytes, auth }) => {
          const res = await grpcCall(rpcPath(m), bytes, auth);
          counts.grpc++;
          tally("grpc", res.status);
          expect(BAD_GRPC.has(res.status), `${rpcPath(m)}: grpc-status ${res.status} ${res.message}`).toBe(false);
          expect(res.status).not.toBe("");
        }),
        params(),
      );
    },
  );

  it("the server is healthy afterwards", async () => {
    expect((await call(`${app.baseUrl}/readyz`, {})).status).toBe(200);
    expect((await call(`${app.baseUrl}/api/v1/status`, {})).status).toBe(200);
    const res = await grpcCall("/hotelops.status.v1.StatusService/GetStatus", new Uint8Array(0), "");
    expect(res.status).toBe("0");
  });
});
