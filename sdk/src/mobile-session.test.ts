import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { GetStatusResponseSchema, StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { bearerInterceptor } from "./auth.ts";
import { createMobileSession, SessionEndedError, type StoredTokens } from "./mobile-session.ts";

/**
 * A stand-in for POST /api/mobile/v1/auth/refresh with the real endpoint's rules: the refresh token rotates,
 * and presenting a spent one revokes the session (so a client that refreshes twice with one token loses).
 */
interface FakeAuth {
  baseUrl: string;
  refreshes: number;
  revoked: boolean;
  /** Answer with this status instead (once). */
  failNext: number | undefined;
  delayMs: number;
  current: { accessToken: string; refreshToken: string };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function startFakeAuth(): Promise<FakeAuth> {
  const state: FakeAuth = {
    baseUrl: "",
    refreshes: 0,
    revoked: false,
    failNext: undefined,
    delayMs: 20,
    current: { accessToken: "access-0", refreshToken: "refresh-0" },
  };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      setTimeout(() => {
        const json = (status: number, body: unknown): void => {
          res.writeHead(status, { "content-type": "application/json", "x-request-id": "req-1" });
          res.end(JSON.stringify(body));
        };
        if (
          req.method !== "POST" ||
          req.url !== "/api/mobile/v1/auth/refresh" ||
          req.headers["content-type"] !== "application/json"
        )
          return json(404, { error: { code: "not_found", message: "no", requestId: "req-1" } });
        if (state.failNext !== undefined) {
          const status = state.failNext;
          state.failNext = undefined;
          return json(status, {
            error: { code: status === 401 ? "unauthorized" : "unavailable", message: "refused", requestId: "req-1" },
          });
        }
        const { refreshToken } = JSON.parse(raw) as { refreshToken: string };
        if (state.revoked || refreshToken !== state.current.refreshToken) {
          state.revoked = true; // reuse detection
          return json(401, { error: { code: "unauthorized", message: "Session ended.", requestId: "req-1" } });
        }
        state.refreshes++;
        state.current = { accessToken: `access-${state.refreshes}`, refreshToken: `refresh-${state.refreshes}` };
        json(200, { tokens: { ...state.current, expiresIn: 900 } });
      }, state.delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

describe("mobile session refresh", () => {
  it("refreshes an expired pair once for any number of concurrent callers and replaces the pair as one", async () => {
    const fake = await startFakeAuth();
    const seen: StoredTokens[] = [];
    const session = createMobileSession({
      baseUrl: fake.baseUrl,
      tokens: { accessToken: "access-0", refreshToken: "refresh-0", expiresIn: 0 },
      onTokens: (t) => void seen.push(t),
    });
    const tokens = await Promise.all(Array.from({ length: 25 }, () => session.accessToken()));
    expect(new Set(tokens)).toEqual(new Set(["access-1"]));
    expect(fake.refreshes).toBe(1);
    expect(fake.revoked).toBe(false);
    expect(seen.map((t) => [t.accessToken, t.refreshToken])).toEqual([["access-1", "refresh-1"]]);
    expect(session.tokens()).toMatchObject({ accessToken: "access-1", refreshToken: "refresh-1" });
    // fresh for 900 - 60 s: no further refresh
    expect(await session.accessToken()).toBe("access-1");
    expect(fake.refreshes).toBe(1);
  });

  it("refreshes before expiry by the configured margin", async () => {
    const fake = await startFakeAuth();
    let clock = 1_000_000;
    const session = createMobileSession({
      baseUrl: fake.baseUrl,
      tokens: { accessToken: "access-0", refreshToken: "refresh-0", expiresIn: 900 },
      now: () => clock,
      refreshBeforeSeconds: 30,
    });
    clock += 869_000;
    expect(await session.accessToken()).toBe("access-0");
    clock += 2_000;
    expect(await session.accessToken()).toBe("access-1");
    expect(fake.refreshes).toBe(1);
  });

  it("callers refused with the same stale token share one refresh; a late one takes the new token", async () => {
    const fake = await startFakeAuth();
    const session = createMobileSession({
      baseUrl: fake.baseUrl,
      tokens: { accessToken: "access-0", refreshToken: "refresh-0", expiresIn: 900 },
    });
    const fresh = await Promise.all(Array.from({ length: 10 }, () => session.refresh("access-0")));
    expect(new Set(fresh)).toEqual(new Set(["access-1"]));
    expect(await session.refresh("access-0")).toBe("access-1"); // lost the race: no second refresh
    expect(fake.refreshes).toBe(1);
    expect(await session.refresh("access-1")).toBe("access-2");
    expect(fake.refreshes).toBe(2);
    expect(fake.revoked).toBe(false);
  });

  it("keeps the pair after a temporary failure and ends the session when the refresh is refused", async () => {
    const fake = await startFakeAuth();
    let endedCalls = 0;
    const session = createMobileSession({
      baseUrl: fake.baseUrl,
      tokens: { accessToken: "access-0", refreshToken: "refresh-0", expiresIn: 0 },
      onSessionEnded: () => endedCalls++,
    });
    fake.failNext = 503;
    await expect(session.accessToken()).rejects.toMatchObject({ status: 503, code: "unavailable" });
    expect(session.tokens()?.refreshToken).toBe("refresh-0");
    expect(await session.accessToken()).toBe("access-1");

    await session.refresh("access-1"); // -> access-2
    fake.failNext = 401;
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => session.refresh("access-2")));
    expect(results.every((r) => r.status === "rejected" && r.reason instanceof SessionEndedError)).toBe(true);
    expect(endedCalls).toBe(1);
    expect(session.tokens()).toBeUndefined();
    const before = fake.refreshes;
    await expect(session.accessToken()).rejects.toBeInstanceOf(SessionEndedError);
    expect(fake.refreshes).toBe(before);
  });

  it("the Bearer interceptor retries a refused call once with the refreshed token", async () => {
    const fake = await startFakeAuth();
    const session = createMobileSession({
      baseUrl: fake.baseUrl,
      tokens: { accessToken: "access-0", refreshToken: "refresh-0", expiresIn: 900 },
    });
    fake.current = { accessToken: "access-0", refreshToken: "refresh-0" };
    const seen: string[] = [];
    let refuseAll = false;
    // an in-memory StatusService that accepts only the server's current access token
    const transport = createRouterTransport(
      (router) =>
        router.service(StatusService, {
          getStatus(_req, ctx) {
            const auth = ctx.requestHeader.get("authorization") ?? "";
            seen.push(auth);
            if (refuseAll || auth !== `Bearer ${fake.current.accessToken}`)
              throw new ConnectError("expired", Code.Unauthenticated);
            return create(GetStatusResponseSchema, { status: "operational" });
          },
        }),
      { transport: { interceptors: [bearerInterceptor(session)] } },
    );
    const client = createClient(StatusService, transport);
    expect((await client.getStatus({})).status).toBe("operational");
    // the server moves on (the access token was refused): one refresh, one retry, success
    fake.current = { accessToken: "access-x", refreshToken: "refresh-0" };
    expect((await client.getStatus({})).status).toBe("operational");
    expect(seen.slice(1)).toEqual(["Bearer access-0", "Bearer access-1"]);
    expect(fake.refreshes).toBe(1);
    // refused again after the retry: the error reaches the caller, no loop
    refuseAll = true;
    await expect(client.getStatus({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(seen.slice(3)).toEqual(["Bearer access-1", "Bearer access-2"]);
    expect(fake.refreshes).toBe(2);
  });
});
