import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";

const run = promisify(execFile);
let databaseUrl: string;
let app: TestApp;

async function ops(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ["src/ops/cli.ts", ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
      timeout: 30_000,
    });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ databaseUrl });
});
afterAll(async () => {
  await app?.close();
});

describe("ops mapping:set", () => {
  it("maps our codes to a provider's and the partner sees them", async () => {
    const property = await createTestProperty(app, { code: "MAP-CLI" });
    const inventory = app.services.inventory;
    await inventory.createRoomType(property.id, { code: "TWN", name: "Twin", maxOccupancy: 2 });
    const set = await ops(
      "mapping:set",
      "--property",
      "MAP-CLI",
      "--provider",
      "acme",
      "--kind",
      "room_type",
      "--code",
      "TWN",
      "--external",
      "ACME-TWIN",
      "--json",
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      propertyCode: "MAP-CLI",
      kind: "room_type",
      externalCode: "ACME-TWIN",
    });
    const missing = await ops(
      "mapping:set",
      "--property",
      "MAP-CLI",
      "--provider",
      "acme",
      "--kind",
      "room_type",
      "--code",
      "NOPE",
      "--external",
      "X",
      "--json",
    );
    expect(missing.code).not.toBe(0);
    const client = await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: ["MAP-CLI"],
      scopes: ["mappings.read"],
    });
    const res = await fetch(`${app.baseUrl}/api/v1/properties/MAP-CLI/mappings`, {
      headers: { authorization: `Bearer ${client.accessToken}` },
    });
    expect(((await res.json()) as { roomTypes: unknown[] }).roomTypes).toEqual([
      { code: "TWN", name: "Twin", externalCode: "ACME-TWIN" },
    ]);
  });
});
