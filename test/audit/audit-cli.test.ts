import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabaseUrl } from "../helpers/db.ts";

// API client changes made with the operator CLI are in the audit trail of the client's properties, face cli.

const run = promisify(execFile);
let databaseUrl: string;
let db: pg.Client;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output is asserted field by field
async function ops(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ["src/ops/cli.ts", ...args, "--json"], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
});
afterAll(async () => {
  await db?.end();
});

it("records client:create and client:approve with the CLI as author, face cli, the secret never", async () => {
  const property = await ops("property:create", "--group", "AUD", "--code", "AUD-CLI", "--name", "Audit CLI");
  const created = await ops(
    "client:create",
    "--provider",
    "channex",
    "--properties",
    "AUD-CLI",
    "--scopes",
    "availability.read",
  );
  await ops("client:approve", created.clientId);
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows } = await db.query(
    `select property_id, action, actor_kind, actor_id, face, request_id, changes from audit_changes
     where entity_type = 'api_client' and entity_id = $1 order by at, id`,
    [created.clientId],
  );
  expect(rows.map((r) => [r.action, r.actor_kind, r.actor_id, r.face])).toEqual([
    ["create", "system", "ops client:create", "cli"],
    ["approve", "system", "ops client:approve", "cli"],
  ]);
  expect(rows.every((r) => r.property_id === property.id && r.request_id !== "")).toBe(true);
  const approve = rows[1].changes as { field: string; before?: unknown; after?: unknown }[];
  expect(approve.find((f) => f.field === "environment")).toEqual({
    field: "environment",
    before: "test",
    after: "live",
  });
  expect(JSON.stringify(rows)).not.toContain(created.clientSecret);
}, 60_000);
