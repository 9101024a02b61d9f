import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { PlatformTestService } from "../gen/hotelops/platformtest/v1/platform_test_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/lib/ids.ts";
import {
  createIdempotencyRepository,
  createRateLimitRepository,
  purgePlatform,
} from "../../src/modules/platform/index.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { startPlatformServer, type PlatformServer } from "./harness.ts";
import { pino } from "pino";

let server: PlatformServer;
let impatient: PlatformServer;
const clock = new ManualClock("2026-11-22T09:00:00.000Z");

beforeAll(async () => {
  const databaseUrl = await freshDatabaseUrl();
  server = await startPlatformServer({ databaseUrl, clock });
  impatient = await startPlatformServer({ databaseUrl, clock, idempotency: { waitMs: 100 } });
});
afterAll(async () => {
  await server?.close();
  await impatient?.close();
});

const staff = (user = "u1") => `Test staff:${user}:s-${user}`;
function post(path: string, body: unknown, headers: Record<string, string> = {}, base = server.base) {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}
const key = () => `k-${newId()}`;

describe("replay", () => {
  it("replays the first REST response byte for byte with Idempotency-Replayed, executing once", async () => {
    const k = key();
    const before = server.executions();
    const first = await post("/pt/v1/widgets", { name: "a" }, { "idempotency-key": k, authorization: staff() });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const firstBody = await first.text();
    const second = await post("/pt/v1/widgets", { name: "a" }, { "idempotency-key": k, authorization: staff() });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    expect(await second.text()).toBe(firstBody);
    expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(server.executions() - before).toBe(1);
  });

  it("replays across faces and processes: a REST write replayed to Connect and gRPC on another server", async () => {
    const k = key();
    const first = await post("/pt/v1/widgets", { name: "b" }, { "idempotency-key": k, authorization: staff() });
    const stored = (await first.json()) as { id: string; execution: number };
    const before = server.executions() + impatient.executions();
    const transports = [
      createConnectTransport({ baseUrl: impatient.base, httpVersion: "1.1" }),
      createConnectTransport({ baseUrl: impatient.base, httpVersion: "2", useBinaryFormat: true }),
      createGrpcWebTransport({ baseUrl: impatient.base, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: impatient.base }),
    ];
    for (const transport of transports) {
      const client = createClient(PlatformTestService, transport);
      let replayed: string | null = null;
      const res = await client.createWidget(
        { name: "b" },
        {
          headers: { "idempotency-key": k, authorization: staff() },
          onHeader: (h) => (replayed = h.get("idempotency-replayed")),
        },
      );
      expect(res.id).toBe(stored.id);
      expect(res.execution).toBe(stored.execution);
      expect(replayed).toBe("true");
    }
    expect(server.executions() + impatient.executions()).toBe(before);
  });

  it("answers 409 idempotency_conflict for the same key with a different body, on every face", async () => {
    const k = key();
    expect((await post("/pt/v1/widgets", { name: "c" }, { "idempotency-key": k, authorization: staff() })).status).toBe(
      201,
    );
    const before = server.executions();
    const res = await post("/pt/v1/widgets", { name: "c2" }, { "idempotency-key": k, authorization: staff() });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("idempotency_conflict");
    expect(body.error.details[0]?.field).toBe("Idempotency-Key");
    const client = createClient(PlatformTestService, createGrpcTransport({ baseUrl: server.base }));
    const err = await client
      .createWidget({ name: "c3" }, { headers: { "idempotency-key": k, authorization: staff() } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).metadata.get("x-error-code")).toBe("idempotency_conflict");
    // Another RPC under the same key is a different request too.
    expect((await post("/pt/v1/orders", { name: "c" }, { "idempotency-key": k, authorization: staff() })).status).toBe(
      409,
    );
    expect(server.executions()).toBe(before);
  });

  it("keeps keys per caller: the same key from another caller executes", async () => {
    const k = key();
    const a = (await (
      await post("/pt/v1/widgets", { name: "d" }, { "idempotency-key": k, authorization: staff("u1") })
    ).json()) as { id: string };
    const res = await post("/pt/v1/widgets", { name: "d" }, { "idempotency-key": k, authorization: staff("u2") });
    expect(res.headers.get("idempotency-replayed")).toBeNull();
    expect(((await res.json()) as { id: string }).id).not.toBe(a.id);
    const c = await post(
      "/pt/v1/widgets",
      { name: "d" },
      { "idempotency-key": k, authorization: "Test client:partner-1" },
    );
    expect(c.headers.get("idempotency-replayed")).toBeNull();
  });

  it("scopes a staff key to the active property: the same key and body in another property conflicts", async () => {
    const k = key();
    expect(
      (await post("/pt/v1/widgets", { name: "p" }, { "idempotency-key": k, authorization: "Test staff:u9:s9:p1" }))
        .status,
    ).toBe(201);
    expect(
      (await post("/pt/v1/widgets", { name: "p" }, { "idempotency-key": k, authorization: "Test staff:u9:s9:p2" }))
        .status,
    ).toBe(409);
  });
});

describe("error outcomes", () => {
  it("replays a stored 4xx error with the header, without executing again", async () => {
    const k = key();
    const before = server.executions();
    const first = await post(
      "/pt/v1/widgets",
      { name: "e", failWith: "validation_failed" },
      { "idempotency-key": k, authorization: staff() },
    );
    expect(first.status).toBe(422);
    const firstBody = (await first.json()) as { error: { code: string; message: string; details: unknown } };
    const second = await post(
      "/pt/v1/widgets",
      { name: "e", failWith: "validation_failed" },
      { "idempotency-key": k, authorization: staff() },
    );
    expect(second.status).toBe(422);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    const secondBody = (await second.json()) as typeof firstBody;
    expect({ ...secondBody.error, requestId: undefined }).toEqual({ ...firstBody.error, requestId: undefined });
    expect(server.executions() - before).toBe(1);
  });

  it("does not store a 5xx: the retry executes", async () => {
    const k = key();
    const before = server.executions();
    expect(
      (await post("/pt/v1/widgets", { name: "f", failWith: "boom" }, { "idempotency-key": k, authorization: staff() }))
        .status,
    ).toBe(500);
    const retry = await post(
      "/pt/v1/widgets",
      { name: "f", failWith: "boom" },
      { "idempotency-key": k, authorization: staff() },
    );
    expect(retry.status).toBe(500);
    expect(retry.headers.get("idempotency-replayed")).toBeNull();
    expect(server.executions() - before).toBe(2);
  });
});

describe("key rules", () => {
  it("requires the key where RestOptions.idempotency_key_required, on REST and Connect", async () => {
    const res = await post("/pt/v1/orders", { name: "g" }, { authorization: staff() });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { field: string; reason: string }[] } };
    expect(body.error.code).toBe("invalid_argument");
    expect(body.error.details).toEqual([{ field: "Idempotency-Key", reason: "is required" }]);
    const client = createClient(
      PlatformTestService,
      createConnectTransport({ baseUrl: server.base, httpVersion: "1.1" }),
    );
    const err = await client.createOrder({ name: "g" }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect(
      (await post("/pt/v1/orders", { name: "g" }, { authorization: staff(), "idempotency-key": key() })).status,
    ).toBe(200);
  });

  it("rejects malformed keys", async () => {
    for (const bad of ["has space", "x".repeat(256), "tab\there"]) {
      const res = await post("/pt/v1/widgets", { name: "h" }, { authorization: staff(), "idempotency-key": bad });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { details: { field: string }[] } }).error.details[0]?.field).toBe(
        "Idempotency-Key",
      );
    }
    expect(
      (await post("/pt/v1/widgets", { name: "h" }, { authorization: staff(), "idempotency-key": "~".repeat(255) }))
        .status,
    ).toBe(201);
  });

  it("ignores the key on reads and, unless required, for anonymous callers", async () => {
    const k = key();
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.base}/pt/v1/widgets/w1`, {
        headers: { "idempotency-key": k, authorization: staff() },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotency-replayed")).toBeNull();
    }
    const before = server.executions();
    await post("/pt/v1/widgets", { name: "i" }, { "idempotency-key": k });
    const again = await post("/pt/v1/widgets", { name: "i" }, { "idempotency-key": k });
    expect(again.headers.get("idempotency-replayed")).toBeNull();
    expect(server.executions() - before).toBe(2);
    // Required: anonymous callers are keyed by their address.
    await post("/pt/v1/orders", { name: "i" }, { "idempotency-key": k });
    expect(
      (await post("/pt/v1/orders", { name: "i" }, { "idempotency-key": k })).headers.get("idempotency-replayed"),
    ).toBe("true");
  });
});

describe("concurrency", () => {
  it("executes 50 parallel identical requests once; every caller gets the same answer", async () => {
    const k = key();
    const before = server.executions();
    const all = await Promise.all(
      Array.from({ length: 50 }, () =>
        post("/pt/v1/widgets", { name: "j", delayMs: 300 }, { "idempotency-key": k, authorization: staff() }),
      ),
    );
    const bodies = await Promise.all(all.map((r) => r.text()));
    expect(all.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(new Set(bodies).size).toBe(1);
    expect(all.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(49);
    expect(server.executions() - before).toBe(1);
  });

  it("answers 409 request_in_progress when the first request outlasts the wait", async () => {
    const k = key();
    const before = impatient.executions();
    const slow = post(
      "/pt/v1/widgets",
      { name: "k", delayMs: 1000 },
      { "idempotency-key": k, authorization: staff() },
      impatient.base,
    );
    await new Promise((r) => setTimeout(r, 150));
    const dup = await post(
      "/pt/v1/widgets",
      { name: "k", delayMs: 1000 },
      { "idempotency-key": k, authorization: staff() },
      impatient.base,
    );
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { error: { code: string } }).error.code).toBe("request_in_progress");
    expect((await slow).status).toBe(201);
    expect(impatient.executions() - before).toBe(1);
  });
});

describe("expiry", () => {
  it("keeps a key 24 hours, then it may be reused; the purge deletes expired keys", async () => {
    const k = key();
    const before = server.executions();
    await post("/pt/v1/widgets", { name: "l" }, { "idempotency-key": k, authorization: staff() });
    clock.advance(24 * 60 * 60 * 1000 - 1000);
    expect(
      (await post("/pt/v1/widgets", { name: "l" }, { "idempotency-key": k, authorization: staff() })).headers.get(
        "idempotency-replayed",
      ),
    ).toBe("true");
    clock.advance(2000);
    const reused = await post("/pt/v1/widgets", { name: "l2" }, { "idempotency-key": k, authorization: staff() });
    expect(reused.status).toBe(201);
    expect(reused.headers.get("idempotency-replayed")).toBeNull();
    expect(server.executions() - before).toBe(2);

    clock.advance(24 * 60 * 60 * 1000 + 1000);
    const purged = await purgePlatform({
      idempotency: createIdempotencyRepository(server.db.pool),
      rateLimits: createRateLimitRepository(server.db.pool),
      clock,
      logger: pino({ level: "silent" }),
    });
    expect(purged.idempotencyKeys).toBeGreaterThan(0);
    const left = await server.db.pool.query("select count(*)::int as n from idempotency_keys where expires_at < $1", [
      clock.now(),
    ]);
    expect(left.rows[0].n).toBe(0);
  });
});
