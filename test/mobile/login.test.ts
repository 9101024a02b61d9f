import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createStaffSession, createTestProperty } from "../helpers/auth.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { readOutbox } from "../../src/lib/mail.ts";
import { maskEmail } from "../../src/modules/auth/index.ts";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let dataDir: string;
const clock = new ManualClock("2027-01-10T08:00:00.000Z");
const PASSWORD = "right-pass-2027";

async function call(
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${app.baseUrl}/api/mobile/v1${path}`, {
    method: "POST",
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers };
}

const device = { deviceId: "2f1c4f5e-0000-4000-8000-000000000001", deviceName: "Test phone" };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "hotelops-login-"));
  app = await startTestApp({ clock, env: { DATA_DIR: dataDir } });
  await createTestProperty(app, { code: "LOG-A", groupCode: "LOGGRP" });
  await createTestProperty(app, { code: "LOG-B", groupCode: "LOGGRP" });
  await createTestProperty(app, { code: "LOG-V", groupCode: "LOGGRP", emailVerification: true });
  await createStaffSession(app, {
    propertyCode: "LOG-A",
    role: "manager",
    email: "manager@login.test",
    password: PASSWORD,
  });
  await createStaffSession(app, { propertyCode: "LOG-B", role: "viewer", email: "manager@login.test" });
  await createStaffSession(app, {
    propertyCode: "LOG-V",
    role: "front_desk",
    email: "desk@login.test",
    password: PASSWORD,
  });
});
afterAll(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("login without e-mail verification", () => {
  it("returns tokens and the profile with every property and its permissions", async () => {
    const res = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "Manager@Login.test",
      password: PASSWORD,
      ...device,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    // exactly the session result: no keys of the challenge, not even null ones
    expect(Object.keys(res.body).sort()).toEqual(["profile", "tokens"]);
    expect(Object.keys(res.body.tokens).sort()).toEqual(["accessToken", "expiresIn", "refreshToken"]);
    expect(Object.keys(res.body.profile).sort()).toEqual(["activePropertyId", "properties", "userId"]);
    expect(res.body.tokens).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: 900,
    });
    expect(res.body.profile.properties.map((p: Json) => p.code)).toEqual(["LOG-A", "LOG-B"]);
    const a = res.body.profile.properties.find((p: Json) => p.code === "LOG-A");
    expect(res.body.profile.activePropertyId).toBe(a.id);
    expect(a.permissions).toContain("night_audit.run");
    expect(res.body.profile.properties.find((p: Json) => p.code === "LOG-B").permissions).not.toContain(
      "reservations.create",
    );
  });

  it("accepts the group code and picks a property the user belongs to", async () => {
    const res = await call("/auth/login", {
      hotelCode: "LOGGRP",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    expect(res.status).toBe(200);
    expect(res.body.tokens).not.toBeNull();
  });

  it("answers a wrong hotel, e-mail or password with the same 401", async () => {
    const bodies = [];
    for (const wrong of [
      { hotelCode: "NOPE-X" },
      { email: "nobody@login.test" },
      { password: "wrong" },
      { hotelCode: "LOG-A", email: "desk@login.test" },
    ]) {
      const res = await call("/auth/login", {
        hotelCode: "LOG-A",
        email: "manager@login.test",
        password: PASSWORD,
        ...device,
        ...wrong,
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      bodies.push({ code: res.body.error.code, message: res.body.error.message });
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
  });
});

describe("login with e-mail verification", () => {
  it("sends a code by e-mail and verifies it once", async () => {
    const res = await call("/auth/login", {
      hotelCode: "LOG-V",
      email: "desk@login.test",
      password: PASSWORD,
      ...device,
    });
    expect(res.status).toBe(200);
    // exactly the challenge: no keys of the session result, not even null ones
    expect(Object.keys(res.body).sort()).toEqual(["challengeId", "expiresAt", "maskedEmail"]);
    expect(res.body).toMatchObject({ challengeId: expect.any(String), maskedEmail: "d**k@login.test" });
    expect(Date.parse(res.body.expiresAt) - clock.now().getTime()).toBe(10 * 60 * 1000);
    const mail = (await readOutbox(dataDir)).filter((m) => m.to === "desk@login.test").at(-1);
    const code = /\b(\d{6})\b/.exec(mail?.text ?? "")?.[1];
    expect(code).toBeDefined();
    const ok = await call("/auth/verify", { challengeId: res.body.challengeId, code, ...device });
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body).sort()).toEqual(["profile", "tokens"]);
    expect(ok.body.tokens.expiresIn).toBe(900);
    expect(ok.body.profile.properties.map((p: Json) => p.code)).toEqual(["LOG-V"]);
    expect((await call("/auth/verify", { challengeId: res.body.challengeId, code, ...device })).status).toBe(401);
  });

  it("kills a challenge after 5 wrong codes and when it expires", async () => {
    const res = await call("/auth/login", {
      hotelCode: "LOG-V",
      email: "desk@login.test",
      password: PASSWORD,
      ...device,
    });
    const code = /\b(\d{6})\b/.exec(
      (await readOutbox(dataDir)).filter((m) => m.to === "desk@login.test").at(-1)?.text ?? "",
    )?.[1];
    const wrong = code === "000000" ? "111111" : "000000";
    for (let i = 0; i < 5; i++)
      expect((await call("/auth/verify", { challengeId: res.body.challengeId, code: wrong, ...device })).status).toBe(
        401,
      );
    expect((await call("/auth/verify", { challengeId: res.body.challengeId, code, ...device })).status).toBe(401);

    const late = await call("/auth/login", {
      hotelCode: "LOG-V",
      email: "desk@login.test",
      password: PASSWORD,
      ...device,
    });
    const lateCode = /\b(\d{6})\b/.exec(
      (await readOutbox(dataDir)).filter((m) => m.to === "desk@login.test").at(-1)?.text ?? "",
    )?.[1];
    clock.advance(11 * 60 * 1000);
    expect((await call("/auth/verify", { challengeId: late.body.challengeId, code: lateCode, ...device })).status).toBe(
      401,
    );
  });

  it("masks e-mail addresses", () => {
    expect(maskEmail("manager@demo.test")).toBe("m*****r@demo.test");
    expect(maskEmail("ab@x.test")).toBe("a*@x.test");
  });
});

describe("refresh, reuse detection, the 30-day cap and logout", () => {
  it("rotates the refresh token every time and revokes the session when a spent one comes back", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const first = login.body.tokens.refreshToken;
    const r1 = await call("/auth/refresh", { refreshToken: first });
    expect(r1.status).toBe(200);
    expect(r1.body.tokens.refreshToken).not.toBe(first);
    const reuse = await call("/auth/refresh", { refreshToken: first });
    expect(reuse.status).toBe(401);
    // the whole session is gone: the newest refresh token and the access token fail too
    expect((await call("/auth/refresh", { refreshToken: r1.body.tokens.refreshToken })).status).toBe(401);
    expect((await call("/auth/logout", undefined, r1.body.tokens.accessToken)).status).toBe(401);
  });

  it("ends a session 30 days after login however often it is refreshed", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    let refresh = login.body.tokens.refreshToken;
    for (let day = 0; day < 3; day++) {
      clock.advance(10 * 24 * 3600 * 1000 + 60_000);
      const r = await call("/auth/refresh", { refreshToken: refresh });
      if (day < 2) {
        expect(r.status).toBe(200);
        refresh = r.body.tokens.refreshToken;
      } else expect(r.status).toBe(401);
    }
  });

  it("logout revokes the session at once", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const token = login.body.tokens.accessToken;
    const out = await call("/auth/logout", undefined, token);
    expect(out.status).toBe(204);
    expect(out.body).toBeUndefined();
    expect((await call("/auth/logout", undefined, token)).status).toBe(401);
    expect((await call("/auth/refresh", { refreshToken: login.body.tokens.refreshToken })).status).toBe(401);
  });

  it("rejects bad input with 400", async () => {
    expect((await call("/auth/login", { hotelCode: 5 })).status).toBe(400);
    expect((await call("/auth/refresh", { refreshToken: ["x"] })).status).toBe(400);
  });
});

describe("POST /session/active-property", () => {
  const get = async (path: string, token: string) =>
    (await fetch(`${app.baseUrl}/api/mobile/v1${path}`, { headers: { authorization: `Bearer ${token}` } })).status;
  const claims = (jwt: string): Json => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());

  it("re-issues the session's tokens for another property of the user; the old ones stop working", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const b = login.body.profile.properties.find((p: Json) => p.code === "LOG-B");
    const res = await call("/session/active-property", { propertyId: b.id }, login.body.tokens.accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(res.body).sort()).toEqual(["profile", "tokens"]);
    expect(res.body.tokens).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: 900,
    });
    expect(res.body.profile.activePropertyId).toBe(b.id);
    expect(res.body.profile.properties.map((p: Json) => p.code)).toEqual(["LOG-A", "LOG-B"]);
    expect(claims(res.body.tokens.accessToken)).toMatchObject({
      pid: b.id,
      sid: claims(login.body.tokens.accessToken).sid,
    });
    // LOG-B's viewer role: the dashboard yes, the forecast (reports.read) no
    expect(await get("/dashboard", res.body.tokens.accessToken)).toBe(200);
    expect(await get("/forecast?year=2027&month=1", res.body.tokens.accessToken)).toBe(403);
    expect(await get("/dashboard", login.body.tokens.accessToken)).toBe(401);
    // the new refresh token stays in LOG-B
    const refreshed = await call("/auth/refresh", { refreshToken: res.body.tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(claims(refreshed.body.tokens.accessToken).pid).toBe(b.id);
    // the refresh token from before the switch is spent: presenting it is reuse, and ends the session
    expect((await call("/auth/refresh", { refreshToken: login.body.tokens.refreshToken })).status).toBe(401);
    expect(await get("/dashboard", refreshed.body.tokens.accessToken)).toBe(401);
  });

  it("two switches at once: the first wins, the other is 409 and the winner's tokens keep working", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const b = login.body.profile.properties.find((p: Json) => p.code === "LOG-B");
    const answers = await Promise.all(
      [1, 2].map(() => call("/session/active-property", { propertyId: b.id }, login.body.tokens.accessToken)),
    );
    // the loser is 409 when it passed authentication before the winner committed, else 401 (its token's property is gone)
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.map((a) => a.status)).toEqual(expect.arrayContaining([expect.toBeOneOf([401, 409])]));
    const winner = answers.find((a) => a.status === 200)!;
    const refreshed = await call("/auth/refresh", { refreshToken: winner.body.tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(await get("/dashboard", refreshed.body.tokens.accessToken)).toBe(200);
  });

  it("404 for a property without an active membership, an unknown or malformed id; 401 without a session", async () => {
    const other = await createTestProperty(app, { code: "LOG-C", groupCode: "LOGGRP" });
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const token = login.body.tokens.accessToken;
    for (const propertyId of [other.id, "00000000-0000-4000-8000-000000000000", "LOG-B"]) {
      const res = await call("/session/active-property", { propertyId }, token);
      expect(res.status, propertyId).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await call("/session/active-property", { propertyId: 5 }, token)).status).toBe(400);
    expect((await call("/session/active-property", { propertyId: other.id })).status).toBe(401);
    // nothing changed: the session is still in LOG-A
    expect(await get("/dashboard", token)).toBe(200);
  });

  it("keeps the 30-day end of the session and stores no tokens for an Idempotency-Key", async () => {
    const login = await call("/auth/login", {
      hotelCode: "LOG-A",
      email: "manager@login.test",
      password: PASSWORD,
      ...device,
    });
    const b = login.body.profile.properties.find((p: Json) => p.code === "LOG-B");
    clock.advance(29 * 24 * 3600 * 1000);
    const fresh = await call("/auth/refresh", { refreshToken: login.body.tokens.refreshToken });
    const key = "switch-key-1";
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/session/active-property`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${fresh.body.tokens.accessToken}`,
        "idempotency-key": key,
      },
      body: JSON.stringify({ propertyId: b.id }),
    });
    expect(res.status).toBe(200);
    const switched = (await res.json()) as Json;
    expect(
      (await app.db.pool.query("select count(*)::int as n from idempotency_keys where key = $1", [key])).rows[0].n,
    ).toBe(0);
    clock.advance(2 * 24 * 3600 * 1000);
    expect((await call("/auth/refresh", { refreshToken: switched.tokens.refreshToken })).status).toBe(401);
  });
});

describe("switching into a property that requires e-mail verification", () => {
  const both = "both@login.test";
  beforeAll(async () => {
    await createStaffSession(app, { propertyCode: "LOG-A", role: "manager", email: both, password: PASSWORD });
    await createStaffSession(app, { propertyCode: "LOG-V", role: "viewer", email: both });
  });
  const codeFor = async (to: string): Promise<string> =>
    /\b(\d{6})\b/.exec((await readOutbox(dataDir)).filter((m) => m.to === to).at(-1)?.text ?? "")?.[1] ?? "";

  it("a session from a login without a code is refused with 403 email_verification_required on REST, Connect and gRPC", async () => {
    const login = await call("/auth/login", { hotelCode: "LOG-A", email: both, password: PASSWORD, ...device });
    const v = login.body.profile.properties.find((p: Json) => p.code === "LOG-V");
    const token = login.body.tokens.accessToken as string;
    const res = await call("/session/active-property", { propertyId: v.id }, token);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("email_verification_required");
    for (const transport of [
      createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: app.baseUrl }),
    ]) {
      const err = await createClient(AuthService, transport)
        .switchActiveProperty({ propertyId: v.id }, { headers: { authorization: `Bearer ${token}` } })
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(err?.code).toBe(Code.PermissionDenied);
      expect(err?.findDetails(ErrorInfoSchema)[0]?.code).toBe("email_verification_required");
    }
    // nothing moved: the session and its tokens still act in LOG-A
    expect(
      (await fetch(`${app.baseUrl}/api/mobile/v1/dashboard`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
  });

  it("a session opened with the e-mail code may switch out and back in", async () => {
    const challenge = await call("/auth/login", { hotelCode: "LOG-V", email: both, password: PASSWORD, ...device });
    const verified = await call("/auth/verify", {
      challengeId: challenge.body.challengeId,
      code: await codeFor(both),
      ...device,
    });
    expect(verified.status).toBe(200);
    const a = verified.body.profile.properties.find((p: Json) => p.code === "LOG-A");
    const out = await call("/session/active-property", { propertyId: a.id }, verified.body.tokens.accessToken);
    expect(out.status).toBe(200);
    const back = await call(
      "/session/active-property",
      { propertyId: verified.body.profile.activePropertyId },
      out.body.tokens.accessToken,
    );
    expect(back.status).toBe(200);
  });
});
