import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { bearer } from "../helpers/auth.ts";

const run = promisify(execFile);
let databaseUrl: string;
let app: TestApp | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output is asserted field by field
type Json = any;

/** `npm run ops -- <args>` as a child process on the test database; stdout parsed when --json. */
async function ops(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: Json }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["src/ops/cli.ts", ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr, json: args.includes("--json") ? JSON.parse(stdout) : undefined };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return {
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
      json: args.includes("--json") && e.stdout !== "" ? JSON.parse(e.stdout) : undefined,
    };
  }
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
});
afterAll(async () => {
  await app?.close();
});

describe("operator CLI", () => {
  it("prints usage and per-command help", async () => {
    const help = await ops("--help");
    expect(help.code).toBe(0);
    for (const c of [
      "property:create",
      "user:create",
      "membership:create",
      "client:create",
      "client:approve",
      "client:list",
      "platform:partner-api",
    ])
      expect(help.stdout).toContain(c);
    const sub = await ops("client:create", "--help");
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("--provider");
    expect((await ops("nope")).code).toBe(2);
    expect((await ops("client:create", "--bogus")).code).toBe(2);
  }, 30_000);

  it("creates a property, user, membership and clients; the secret works on the token endpoint", async () => {
    const property = await ops(
      "property:create",
      "--group",
      "CLI",
      "--code",
      "CLI-ONE",
      "--name",
      "CLI Hotel",
      "--json",
    );
    expect(property.code).toBe(0);
    expect(property.json).toMatchObject({
      code: "CLI-ONE",
      groupCode: "CLI",
      currency: "TRY",
      amountScale: 100,
      timeZone: "Europe/Istanbul",
    });
    const dup = await ops("property:create", "--group", "CLI", "--code", "CLI-ONE", "--name", "Again", "--json");
    expect(dup.code).toBe(1);
    expect(dup.json.error.code).toBe("conflict");
    const bad = await ops(
      "property:create",
      "--group",
      "CLI",
      "--code",
      "x",
      "--name",
      "Bad",
      "--currency",
      "TL",
      "--json",
    );
    expect(bad.code).toBe(2);
    expect(bad.json.error.code).toBe("invalid_argument");

    const user = await ops("user:create", "--email", "ops@cli.test", "--password", "long-enough-1", "--json");
    expect(user.json).toMatchObject({ email: "ops@cli.test", active: true });
    const membership = await ops(
      "membership:create",
      "--email",
      "ops@cli.test",
      "--property",
      "CLI-ONE",
      "--role",
      "front_desk",
      "--json",
    );
    expect(membership.json).toMatchObject({ propertyCode: "CLI-ONE", role: "front_desk", userId: user.json.id });
    expect(
      (await ops("membership:create", "--email", "ops@cli.test", "--property", "CLI-ONE", "--role", "king", "--json"))
        .json.error.code,
    ).toBe("invalid_argument");

    const created = await ops(
      "client:create",
      "--provider",
      "channex",
      "--properties",
      "CLI-ONE",
      "--scopes",
      "availability.read,mappings.read",
      "--json",
    );
    expect(created.code).toBe(0);
    expect(created.json.clientId).toMatch(/^cli_[0-9a-f]{24}$/);
    expect(typeof created.json.clientSecret).toBe("string");
    expect(created.json).toMatchObject({ kind: "partner", environment: "test", properties: ["CLI-ONE"] });
    expect(
      (await ops("client:create", "--provider", "channex", "--properties", "CLI-ONE", "--scopes", "admin", "--json"))
        .json.error.code,
    ).toBe("invalid_argument");
    expect(
      (
        await ops(
          "client:create",
          "--provider",
          "channex",
          "--properties",
          "NOPE",
          "--scopes",
          "mappings.read",
          "--json",
        )
      ).json.error.code,
    ).toBe("invalid_argument");

    const approved = await ops("client:approve", created.json.clientId, "--json");
    expect(approved.json).toMatchObject({ clientId: created.json.clientId, environment: "live" });
    expect(approved.json.approvedAt).toMatch(/Z$/);
    expect((await ops("client:approve", "cli_missing", "--json")).json.error.code).toBe("not_found");

    const internal = await ops(
      "client:create",
      "--kind",
      "internal",
      "--provider",
      "hotelops",
      "--scopes",
      "admin",
      "--json",
    );
    expect(internal.json.kind).toBe("internal");

    const listed = await ops("client:list", "--json");
    expect(listed.json.clients.map((c: Json) => c.clientId)).toEqual(
      expect.arrayContaining([created.json.clientId, internal.json.clientId]),
    );
    expect(listed.stdout).not.toContain(created.json.clientSecret);
    const text = await ops("client:list");
    expect(text.stdout).toContain(created.json.clientId);

    // The same database served over HTTP: the printed secret is a working credential.
    app = await startTestApp({ databaseUrl });
    const basic = Buffer.from(`${created.json.clientId}:${created.json.clientSecret}`).toString("base64");
    const res = await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
      method: "POST",
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).scope).toBe("availability.read mappings.read");

    const ibasic = Buffer.from(`${internal.json.clientId}:${internal.json.clientSecret}`).toString("base64");
    const itok = (await (
      await fetch(`${app.baseUrl}/api/v1/oauth/token`, {
        method: "POST",
        headers: { authorization: `Basic ${ibasic}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      })
    ).json()) as Json;
    const viaApi = await fetch(`${app.baseUrl}/api/admin/v1/clients`, { headers: bearer(itok.access_token) });
    expect(viaApi.status).toBe(200);
  }, 90_000);

  it("switches the partner API platform-wide", async () => {
    const off = await ops("platform:partner-api", "off", "--json");
    expect(off.json).toEqual({ partnerApi: "disabled" });
    if (app !== undefined)
      expect(((await (await fetch(`${app.baseUrl}/api/v1/status`)).json()) as Json).partnerApi).toBe("disabled");
    expect((await ops("platform:partner-api", "on", "--json")).json).toEqual({ partnerApi: "enabled" });
    expect((await ops("platform:partner-api", "maybe")).code).toBe(2);
  }, 30_000);

  it("seeds the demo data once", async () => {
    const first = await ops("seed:demo", "--json");
    expect(first.code).toBe(0);
    expect(first.json.created).toBe(true);
    expect(first.json.properties.map((p: Json) => p.code).sort()).toEqual(["DEMO-ANK", "DEMO-IST"]);
    expect(first.json.client.clientSecret).toBeTruthy();
    const again = await ops("seed:demo", "--json");
    expect(again.json.created).toBe(false);
    expect(again.json.client).toBeUndefined();
  }, 30_000);
});
