import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";

interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}
type Refresh = (refreshToken: string, deviceId?: string) => Promise<{ ok: true; tokens: Tokens } | { ok: false }>;

const DEVICE = "grace-phone-1";

/** One refresh call per face, over real sockets. */
function faces(app: TestApp): [string, Refresh][] {
  const rpc = (transport: Parameters<typeof createClient>[1]): Refresh => {
    const client = createClient(AuthService, transport);
    return async (refreshToken, deviceId) =>
      client.refreshSession({ refreshToken, deviceId: deviceId ?? "" }).then(
        (r) => ({ ok: true as const, tokens: r.tokens! }),
        () => ({ ok: false as const }),
      );
  };
  return [
    [
      "REST",
      async (refreshToken, deviceId) => {
        const res = await fetch(`${app.baseUrl}/api/mobile/v1/auth/refresh`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ refreshToken, ...(deviceId !== undefined ? { deviceId } : {}) }),
        });
        const body = (await res.json()) as { tokens: Tokens };
        return res.status === 200 ? { ok: true, tokens: body.tokens } : { ok: false };
      },
    ],
    ["Connect", rpc(createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }))],
    ["gRPC", rpc(createGrpcTransport({ baseUrl: app.baseUrl }))],
  ];
}

async function dashboard(app: TestApp, accessToken: string): Promise<number> {
  return (await fetch(`${app.baseUrl}/api/mobile/v1/dashboard`, { headers: bearer(accessToken) })).status;
}

describe("refresh grace window on a moved clock (30 s by default)", () => {
  let app: TestApp;
  const clock = new ManualClock("2027-02-01T08:00:00.000Z");
  beforeAll(async () => {
    app = await startTestApp({ clock });
    await createTestProperty(app, { code: "GRACE-A" });
  });
  afterAll(async () => app?.close());

  const session = () => createStaffSession(app, { propertyCode: "GRACE-A", role: "viewer", deviceId: DEVICE });

  it.each(["REST", "Connect", "gRPC"])(
    "%s: a retried refresh from the same device gets the same pair",
    async (face) => {
      const refresh = faces(app).find(([f]) => f === face)![1];
      const s = await session();
      const first = await refresh(s.refreshToken, DEVICE);
      expect(first.ok).toBe(true);
      if (!first.ok) return;
      clock.advance(29_000);
      const retry = await refresh(s.refreshToken, DEVICE);
      expect(retry).toMatchObject({
        ok: true,
        tokens: { accessToken: first.tokens.accessToken, refreshToken: first.tokens.refreshToken },
      });
      if (retry.ok) expect(retry.tokens.expiresIn).toBe(900 - 29);
      // the session lives on: the pair works, and the new refresh token rotates as usual
      expect(await dashboard(app, first.tokens.accessToken)).toBe(200);
      const next = await refresh(first.tokens.refreshToken, DEVICE);
      expect(next.ok).toBe(true);
      if (next.ok) expect(await dashboard(app, next.tokens.accessToken)).toBe(200);
    },
  );

  it.each(["REST", "Connect", "gRPC"])(
    "%s: reuse outside the window, from another device or without one revokes",
    async (face) => {
      const refresh = faces(app).find(([f]) => f === face)![1];
      for (const [retryAfterMs, device] of [
        [31_000, DEVICE],
        [1_000, "another-phone"],
        [1_000, undefined],
      ] as const) {
        const s = await session();
        const first = await refresh(s.refreshToken, DEVICE);
        expect(first.ok).toBe(true);
        if (!first.ok) return;
        clock.advance(retryAfterMs);
        expect((await refresh(s.refreshToken, device)).ok).toBe(false);
        // the whole session is revoked, the winner's pair included
        expect((await refresh(first.tokens.refreshToken, DEVICE)).ok).toBe(false);
        expect(await dashboard(app, first.tokens.accessToken)).toBe(401);
      }
    },
  );

  it("a spent token whose successor was already used is reuse even within the window", async () => {
    const [, refresh] = faces(app)[0]!;
    const s = await session();
    const first = await refresh(s.refreshToken, DEVICE);
    if (!first.ok) throw new Error("refresh failed");
    expect((await refresh(first.tokens.refreshToken, DEVICE)).ok).toBe(true);
    expect((await refresh(s.refreshToken, DEVICE)).ok).toBe(false);
    expect(await dashboard(app, first.tokens.accessToken)).toBe(401);
  });

  it.each(["REST", "Connect", "gRPC"])("%s: expiresIn never exceeds what the session has left", async (face) => {
    const refresh = faces(app).find(([f]) => f === face)![1];
    const s = await session();
    clock.advance(30 * 24 * 3600 * 1000 - 5 * 60_000);
    const r = await refresh(s.refreshToken, DEVICE);
    expect(r).toMatchObject({ ok: true, tokens: { expiresIn: 300 } });
    if (!r.ok) return;
    const claims = JSON.parse(Buffer.from(r.tokens.accessToken.split(".")[1]!, "base64url").toString()) as {
      iat: number;
      exp: number;
    };
    expect(claims.exp - claims.iat).toBe(300);
  });
});

describe("refresh grace window on the real clock", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { REFRESH_GRACE_SECONDS: "1" } });
    await createTestProperty(app, { code: "GRACE-R" });
  });
  afterAll(async () => app?.close());

  it("answers a retry within REFRESH_GRACE_SECONDS and revokes after it", async () => {
    const [, refresh] = faces(app)[0]!;
    const a = await createStaffSession(app, { propertyCode: "GRACE-R", role: "viewer", deviceId: DEVICE });
    const first = await refresh(a.refreshToken, DEVICE);
    if (!first.ok) throw new Error("refresh failed");
    expect(await refresh(a.refreshToken, DEVICE)).toMatchObject({
      ok: true,
      tokens: { accessToken: first.tokens.accessToken, refreshToken: first.tokens.refreshToken },
    });
    await new Promise((r) => setTimeout(r, 1_300));
    expect((await refresh(a.refreshToken, DEVICE)).ok).toBe(false);
    expect(await dashboard(app, first.tokens.accessToken)).toBe(401);
  });
});
