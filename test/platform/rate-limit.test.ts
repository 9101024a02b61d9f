import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Agent, fetch as undiciFetch } from "undici";
import { pino } from "pino";
import { PlatformTestService } from "../gen/hotelops/platformtest/v1/platform_test_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import {
  createIdempotencyRepository,
  createRateLimitRepository,
  purgePlatform,
} from "../../src/modules/platform/index.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { startPlatformServer, type PlatformServer } from "./harness.ts";

// Two servers ("processes") on one database, with small limits and one clock at 20 s into a minute.
let a: PlatformServer;
let b: PlatformServer;
const clock = new ManualClock("2026-11-22T09:00:20.000Z");
const limits = { anonPerMinute: 5, staffPerMinute: 3, authPerMinute: 3 };

beforeAll(async () => {
  const databaseUrl = await freshDatabaseUrl();
  a = await startPlatformServer({ databaseUrl, clock, limits });
  b = await startPlatformServer({ databaseUrl, clock, limits });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const nextMinute = () => clock.set(new Date(Math.floor(clock.now().getTime() / 60_000) * 60_000 + 60_000 + 20_000));
const get = (server: PlatformServer, headers: Record<string, string> = {}) =>
  fetch(`${server.base}/pt/v1/widgets/w`, { headers });
const limitHeaders = (res: Response) => [
  res.headers.get("ratelimit-limit"),
  res.headers.get("ratelimit-remaining"),
  res.headers.get("ratelimit-reset"),
];

describe("limits shared through PostgreSQL", () => {
  it("counts anonymous calls per IP across two processes, then answers 429 with Retry-After on every face", async () => {
    nextMinute();
    const seen: (string | null)[][] = [];
    for (const server of [a, b, a, b, a]) {
      const res = await get(server);
      expect(res.status).toBe(200);
      seen.push(limitHeaders(res));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0].map((left) => ["5", String(left), "40"]));
    const over = await get(b);
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("40");
    expect(limitHeaders(over)).toEqual(["5", "0", "40"]);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("rate_limited");

    const client = createClient(PlatformTestService, createGrpcTransport({ baseUrl: a.base }));
    const err = await client.getWidget({ id: "w" }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((err as ConnectError).metadata.get("retry-after")).toBe("40");
    expect((err as ConnectError).metadata.get("ratelimit-remaining")).toBe("0");

    // The next window starts fresh; Reset counts down to its end.
    clock.advance(40_000);
    const fresh = await get(a);
    expect(fresh.status).toBe(200);
    expect(limitHeaders(fresh)).toEqual(["5", "4", "60"]);
  });

  it("gives each staff session its own bucket with the staff limit", async () => {
    nextMinute();
    for (const left of [2, 1, 0])
      expect(limitHeaders(await get(a, { authorization: "Test staff:u1:s1" }))).toEqual(["3", String(left), "40"]);
    expect((await get(b, { authorization: "Test staff:u1:s1" })).status).toBe(429);
    expect((await get(b, { authorization: "Test staff:u1:s2" })).status).toBe(200);
    expect((await get(b)).status).toBe(200); // anonymous is a bucket of its own
  });

  it("takes a client's limit from api_clients.rate_limit_per_minute, 600 without a row", async () => {
    nextMinute();
    await a.db.pool.query(
      "insert into api_clients (id, kind, provider, secret_hash, rate_limit_per_minute) values ('cl-slow', 'partner', 'p', 'x', 2)",
    );
    expect(limitHeaders(await get(a, { authorization: "Test client:cl-slow" }))).toEqual(["2", "1", "40"]);
    expect(limitHeaders(await get(b, { authorization: "Test client:cl-slow" }))).toEqual(["2", "0", "40"]);
    const over = await get(a, { authorization: "Test client:cl-slow" });
    expect(over.status).toBe(429);
    expect(limitHeaders(await get(a, { authorization: "Test client:cl-other" }))).toEqual(["600", "599", "40"]);
  });

  it("claims no Idempotency-Key for a call over its limit (count and claim are one statement)", async () => {
    nextMinute();
    const write = (server: PlatformServer, key: string, name: string) =>
      fetch(`${server.base}/pt/v1/widgets`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Test client:cl-writer", "idempotency-key": key },
        body: JSON.stringify({ name }),
      });
    await a.db.pool.query(
      "insert into api_clients (id, kind, provider, secret_hash, rate_limit_per_minute) values ('cl-writer', 'partner', 'p', 'x', 2)",
    );
    const before = a.executions() + b.executions();
    const first = await write(a, "k-1", "one");
    expect(first.status).toBe(201);
    const replayed = await write(b, "k-1", "one");
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
    expect(limitHeaders(replayed)).toEqual(["2", "0", "40"]);
    const limited = await write(a, "k-2", "two");
    expect(limited.status).toBe(429);
    const { rows } = await a.db.pool.query(
      "select key from idempotency_keys where caller = 'client:cl-writer' order by key",
    );
    expect(rows).toEqual([{ key: "k-1" }]);
    nextMinute();
    // the key of the refused call is free: the retry executes at once instead of waiting for a claim
    const retried = await write(b, "k-2", "two");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotency-replayed")).toBeNull();
    expect(a.executions() + b.executions() - before).toBe(2);
  });

  it("sends the limit headers with error responses too", async () => {
    nextMinute();
    const res = await fetch(`${a.base}/pt/v1/widgets`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x", failWith: "validation_failed" }),
    });
    expect(res.status).toBe(422);
    expect(limitHeaders(res)).toEqual(["5", "4", "40"]);
  });

  it("never limits the none class", async () => {
    nextMinute();
    for (let i = 0; i < 6; i++) await get(a);
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${b.base}/pt/v1/ping`);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBeNull();
    }
  });
});

describe("auth class", () => {
  // Loopback is all of 127/8 on Linux: each agent is a different client IP.
  const from = (ip: string) => new Agent({ localAddress: ip });
  const ipA = from("127.0.0.2");
  const ipB = from("127.0.0.3");
  const ipC = from("127.0.0.4");
  afterAll(async () => {
    await Promise.all([ipA.close(), ipB.close(), ipC.close()]);
  });
  const login = (agent: Agent, email: string, server = a) =>
    undiciFetch(`${server.base}/pt/v1/login`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "x" }),
    });

  it("limits login-like calls per client IP and per account, with the strict limit", async () => {
    nextMinute();
    for (const email of ["x1@t.test", "x2@t.test", "x3@t.test"]) expect((await login(ipA, email)).status).toBe(200);
    const perIp = await login(ipA, "x4@t.test", b);
    expect(perIp.status).toBe(429);
    expect(perIp.headers.get("ratelimit-limit")).toBe("3");
    // Another IP, the same account (case and spaces do not make a new one): the account bucket fills up.
    expect((await login(ipB, " X1@t.test")).status).toBe(200);
    expect((await login(ipB, "x1@t.test", b)).status).toBe(200);
    const perAccount = await login(ipB, "x1@T.test");
    expect(perAccount.status).toBe(429);
    expect(perAccount.headers.get("retry-after")).toBe("40");
    expect((await login(ipC, "y@t.test")).status).toBe(200);
  });

  it("does not store account names in the table", async () => {
    const rows = await a.db.pool.query<{ bucket: string }>(
      "select bucket from rate_limits where bucket like 'auth-account:%'",
    );
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const r of rows.rows) expect(r.bucket).not.toContain("@");
  });
});

describe("purge", () => {
  it("deletes windows that can no longer count", async () => {
    nextMinute();
    await get(a);
    clock.advance(3 * 60_000);
    const purged = await purgePlatform({
      idempotency: createIdempotencyRepository(a.db.pool),
      rateLimits: createRateLimitRepository(a.db.pool),
      clock,
      logger: pino({ level: "silent" }),
    });
    expect(purged.rateLimitWindows).toBeGreaterThan(0);
    const left = await a.db.pool.query<{ n: number }>(
      "select count(*)::int as n from rate_limits where window_start < $1",
      [new Date(clock.now().getTime() - 2 * 60_000)],
    );
    expect(left.rows[0]?.n).toBe(0);
  });
});

describe("the service: two app instances on one database", () => {
  let one: TestApp;
  let two: TestApp;
  let databaseUrl: string;
  // A clock of their own, standing at 20 s into a minute: the windows are fixed minutes, and on the real clock a
  // minute boundary falling between two requests of a test would reset the counts under it.
  const appClock = new ManualClock("2026-11-22T10:00:20.000Z");
  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    const env = { RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: "3" };
    one = await startTestApp({ databaseUrl, env, clock: appClock });
    two = await startTestApp({ databaseUrl, env, clock: appClock });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });
  const token = (app: TestApp) =>
    fetch(`${app.baseUrl}/api/v1/oauth/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from("nobody:wrong").toString("base64")}`,
      },
      body: "grant_type=client_credentials",
    });

  it("limits failed token authentications (token class) across both processes with RateLimit headers and 429 + Retry-After", async () => {
    const answers = [];
    for (const app of [one, two, one]) {
      const res = await token(app);
      expect(res.status).toBe(401);
      answers.push([res.headers.get("ratelimit-limit"), res.headers.get("ratelimit-remaining")]);
    }
    expect(answers).toEqual([
      ["3", "2"],
      ["3", "1"],
      ["3", "0"],
    ]);
    const over = await token(two);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get("ratelimit-reset"))).toBeLessThanOrEqual(60);
  });

  it("counts per client IP from X-Forwarded-For only behind TRUSTED_PROXIES", async () => {
    const tokenAs = (app: TestApp, client: string, forwardedFor: string) =>
      fetch(`${app.baseUrl}/api/v1/oauth/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${client}:wrong`).toString("base64")}`,
          "x-forwarded-for": forwardedFor,
        },
        body: "grant_type=client_credentials",
      });
    // `one` trusts no proxy: the header changes nothing, the loopback bucket is spent
    expect((await tokenAs(one, "xff-a", "203.0.113.50")).status).toBe(429);
    const proxied = await startTestApp({
      databaseUrl,
      env: { RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: "2", TRUSTED_PROXIES: "127.0.0.1,::1" },
      clock: appClock,
    });
    try {
      expect((await tokenAs(proxied, "xff-1", "198.51.100.9, 203.0.113.1")).status).toBe(401);
      expect((await tokenAs(proxied, "xff-2", "203.0.113.1")).status).toBe(401);
      expect((await tokenAs(proxied, "xff-3", "203.0.113.1")).status).toBe(429);
      // another client behind the same proxy has its own bucket; a spoofed left entry does not help the first
      expect((await tokenAs(proxied, "xff-4", "203.0.113.2")).status).toBe(401);
      expect((await tokenAs(proxied, "xff-5", "203.0.113.2, 203.0.113.1")).status).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  it("schedules the purge job", async () => {
    const rows = await one.db.pool.query<{ cron: string }>(
      "select cron from pgboss.schedule where name = 'platform.purge'",
    );
    expect(rows.rows.map((r) => r.cron)).toEqual(["*/5 * * * *"]);
  });

  it("leaves the status endpoint unlimited (class none)", async () => {
    const res = await fetch(`${one.baseUrl}/api/v1/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-limit")).toBeNull();
  });
});

describe("failure of the counter", () => {
  it("fails open: a call goes through without limit headers when the counter cannot be written", async () => {
    const server = await startPlatformServer({ databaseUrl: await freshDatabaseUrl(), limits });
    try {
      await server.db.pool.query("alter table rate_limits rename to rate_limits_gone");
      const res = await get(server);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBeNull();
      await server.db.pool.query("alter table rate_limits_gone rename to rate_limits");
      expect((await get(server)).headers.get("ratelimit-limit")).toBe("5");
    } finally {
      await server.close();
    }
  });
});
