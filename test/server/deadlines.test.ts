// A caller's deadline (gRPC grpc-timeout, Connect Connect-Timeout-Ms) bounds the call on the server too: one that
// has already passed does not start the call, and one that passes while the call waits for a database connection
// is abandoned with DEADLINE_EXCEEDED before it writes (src/lib/deadline.ts). Both servers of unary calls (the fast
// path and connect-es's handlers, UNARY_FAST_PATH=off) behave the same; "nothing written" is read from the table.
import http2 from "node:http2";
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import type pg from "pg";
import { AdminService, CreatePropertyRequestSchema } from "../../gen/hotelops/admin/v1/admin_pb.js";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient } from "../helpers/auth.ts";

const POOL = 3;
const METHOD = "/hotelops.admin.v1.AdminService/CreateProperty";
const apps: Record<"fast path" | "connect-es", TestApp | undefined> = {
  "fast path": undefined,
  "connect-es": undefined,
};
const tokens = new Map<TestApp, string>();

beforeAll(async () => {
  for (const [name, env] of [
    ["fast path", { UNARY_FAST_PATH: "on" }],
    ["connect-es", { UNARY_FAST_PATH: "off" }],
  ] as const) {
    const app = await startTestApp({ env: { ...env, DATABASE_POOL_MAX: String(POOL) } });
    apps[name] = app;
    tokens.set(
      app,
      (await createTestClient(app, { kind: "internal", propertyCodes: [], scopes: ["admin"] })).accessToken,
    );
  }
});
afterAll(async () => {
  for (const app of Object.values(apps)) await app?.close();
});

const newCode = (): string => `DL-${randomBytes(4).toString("hex").toUpperCase()}`;
const property = (code: string) =>
  create(CreatePropertyRequestSchema, {
    groupCode: "DEADLINES",
    code,
    name: "Deadline test",
    timeZone: "Europe/Istanbul",
    currency: "TRY",
  });

async function rows(app: TestApp, code: string): Promise<number> {
  const { rows: found } = await app.db.pool.query<{ n: number }>(
    "select count(*)::int as n from properties where code = $1",
    [code],
  );
  return found[0]!.n;
}

/** Every connection of the app's pool, checked out until the returned function gives them back. */
async function exhaustPool(pool: pg.Pool): Promise<() => void> {
  const clients = await Promise.all(Array.from({ length: POOL }, () => pool.connect()));
  return () => clients.forEach((c) => c.release());
}

/** A raw gRPC call over HTTP/2 with the headers given (grpc-js cannot send a deadline that has passed). */
function rawGrpc(port: number, headers: Record<string, string>, message: Uint8Array): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const frame = Buffer.alloc(5 + message.byteLength);
    frame.writeUInt32BE(message.byteLength, 1);
    frame.set(message, 5);
    const stream = session.request({
      ":method": "POST",
      ":path": METHOD,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let head: Record<string, unknown> = {};
    stream.on("response", (h) => (head = { ...h }));
    stream.on("trailers", (t) => (head = { ...head, ...t }));
    stream.on("data", () => undefined);
    stream.on("end", () => {
      session.close();
      resolve(head);
    });
    stream.on("error", reject);
    stream.end(frame);
  });
}

function grpcCreate(app: TestApp, code: string, deadlineMs: number, key: string): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(`127.0.0.1:${app.port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${tokens.get(app)!}`);
  metadata.set("idempotency-key", key);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      METHOD,
      (m: Uint8Array) => Buffer.from(m),
      (b: Buffer) => b,
      toBinary(CreatePropertyRequestSchema, property(code)),
      metadata,
      { deadline: Date.now() + deadlineMs },
      (err) => {
        client.close();
        resolve(err);
      },
    );
  });
}

describe.each(["fast path", "connect-es"] as const)("%s", (name) => {
  const app = (): TestApp => apps[name]!;

  it("Connect: an expired Connect-Timeout-Ms does not start the call (deadline_exceeded, no row)", async () => {
    const code = newCode();
    const res = await fetch(`${app().baseUrl}${METHOD}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "connect-timeout-ms": "0",
        authorization: `Bearer ${tokens.get(app())!}`,
      },
      body: JSON.stringify({
        groupCode: "DEADLINES",
        code,
        name: "Deadline test",
        timeZone: "Europe/Istanbul",
        currency: "TRY",
      }),
    });
    expect(((await res.json()) as { code: string }).code).toBe("deadline_exceeded");
    expect(await rows(app(), code)).toBe(0);
  });

  it("gRPC: an expired grpc-timeout does not start the call (DEADLINE_EXCEEDED, no row)", async () => {
    const code = newCode();
    const head = await rawGrpc(
      app().port,
      { "grpc-timeout": "0n", authorization: `Bearer ${tokens.get(app())!}` },
      toBinary(CreatePropertyRequestSchema, property(code)),
    );
    expect(head["grpc-status"]).toBe(String(grpc.status.DEADLINE_EXCEEDED));
    expect(await rows(app(), code)).toBe(0);
  });

  it("grpc-js: a keyed call whose deadline passes while it waits for a connection writes nothing; its key is free", async () => {
    const code = newCode();
    const key = randomUUID();
    const release = await exhaustPool(app().db.pool);
    let err: grpc.ServiceError | null;
    try {
      err = await grpcCreate(app(), code, 300, key);
    } finally {
      setTimeout(release, 100);
    }
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // the server goes on once the connections are back: give it the time to write, had it kept going
    await new Promise((r) => setTimeout(r, 600));
    expect(await rows(app(), code)).toBe(0);
    // the abandoned call stored no outcome: a retry with the same key runs (and writes once)
    expect(await grpcCreate(app(), code, 10_000, key)).toBeNull();
    expect(await rows(app(), code)).toBe(1);
  });

  it("Connect client: a call whose deadline passes while it waits for a connection writes nothing", async () => {
    const code = newCode();
    const client = createClient(AdminService, createConnectTransport({ baseUrl: app().baseUrl, httpVersion: "1.1" }));
    const release = await exhaustPool(app().db.pool);
    let err: unknown;
    try {
      await client.createProperty(property(code), {
        timeoutMs: 300,
        headers: { authorization: `Bearer ${tokens.get(app())!}` },
      });
    } catch (e) {
      err = e;
    } finally {
      setTimeout(release, 100);
    }
    expect(ConnectError.from(err).code).toBe(Code.DeadlineExceeded);
    await new Promise((r) => setTimeout(r, 600));
    expect(await rows(app(), code)).toBe(0);
  });
});
