import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import pg from "pg";
import { createLogger } from "../../src/lib/logger.ts";
import { runQuery } from "../../src/db/queryable.ts";
import { toAppError } from "../../src/errors.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";

let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabaseUrl(), max: 2 });
});
afterAll(async () => {
  await pool?.end();
});

/** One log line written by the service's own logger, as the object it parses to. */
function logged(fields: Record<string, unknown>): { line: string; json: Record<string, unknown> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  createLogger("info", sink).error(fields, "call failed");
  const line = lines.join("");
  return { line, json: JSON.parse(line) as Record<string, unknown> };
}

const LEAKS = ["secretKey", "processID", "connectionParameters", "password", "select missing_column", "_events"];

describe("database errors in log lines: code (errorCode), message and statement name only", () => {
  it("a failing named statement on a pooled connection", async () => {
    const err = await runQuery(
      pool,
      { name: "log_probe", text: "select missing_column from pg_class where $1::int = 1" },
      [1],
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    const { line, json } = logged({ requestId: "r1", err: toAppError(err) });
    const cause = (json.err as { cause?: Record<string, unknown> }).cause;
    expect(cause).toEqual({
      type: "DatabaseError",
      errorCode: "42703",
      message: 'column "missing_column" does not exist',
      statement: "log_probe",
    });
    for (const leak of LEAKS) expect(line).not.toContain(leak);
    expect(line.length).toBeLessThan(2048);
  });

  it("a failing query on a checked-out client, and a connection that cannot be made", async () => {
    const client = await pool.connect();
    try {
      const err = await client.query("select 1/0").then(
        () => undefined,
        (e: unknown) => e,
      );
      const { line, json } = logged({ err });
      expect(json.err).toEqual({ type: "DatabaseError", errorCode: "22012", message: "division by zero" });
      for (const leak of LEAKS) expect(line).not.toContain(leak);
    } finally {
      client.release();
    }
    const closed = new pg.Client({ connectionString: "postgres://u:hunter2@127.0.0.1:1/x" });
    const refused = await closed.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    const { line } = logged({ err: refused });
    for (const leak of [...LEAKS, "hunter2"]) expect(line).not.toContain(leak);
    expect(line.length).toBeLessThan(4096);
  });
});
