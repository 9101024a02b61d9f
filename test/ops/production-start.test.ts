// `npm start` with NODE_ENV=production, as an operator runs it: every line on standard output and error is a JSON
// line (the banner, the seed, crash traces, a refused configuration), and no secret is printed: the demo credentials
// go to a file under DATA_DIR that only the operator can read.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD } from "../../src/ops/seed.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import { killAllServices, startService, until } from "../helpers/service-process.ts";

afterAll(killAllServices);

/** Node's --import of a module that makes the process crash on SIGUSR2 (no test hook in the service's code). */
const crashOnSignal = (how: "throw" | "reject"): string => {
  const code =
    how === "throw"
      ? `process.on("SIGUSR2", () => setImmediate(() => { throw new Error("crash test: thrown"); }));`
      : `process.on("SIGUSR2", () => { Promise.reject(new Error("crash test: rejected")); });`;
  return `--import=data:text/javascript,${encodeURIComponent(code)}`;
};

function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });
}

describe("NODE_ENV=production start", () => {
  it(
    "prints no demo password or client secret (they are in a 0600 file), and an uncaught exception is a JSON line",
    { timeout: 60_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "hotelops-prod-start-"));
      const service = await startService({
        NODE_ENV: "production",
        DATABASE_URL: await freshDatabaseUrl(),
        SEED_DEMO: "1",
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        NODE_OPTIONS: crashOnSignal("throw"),
      });
      await until(async () => service.output().includes("demo data seeded"), 30_000, "the seed's line");
      const file = join(dataDir, "demo-credentials.txt");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const credentials = readFileSync(file, "utf8");
      expect(credentials).toContain(`manager@demo.test / ${DEMO_PASSWORD}`);
      const [, clientId, secret] = /client_id=(\S+) client_secret=(\S+)/.exec(credentials) ?? [];
      expect(secret).toBeTruthy();
      // the file's secret is the real one: the internal client gets a token with it
      const token = await fetch(`${service.base}/api/v1/oauth/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials",
      });
      expect(token.status).toBe(200);
      await token.arrayBuffer();

      service.child.kill("SIGUSR2");
      expect(await service.exited).toBe(1);
      const output = service.output();
      expect(output).not.toContain(secret!);
      expect(output).not.toContain(DEMO_PASSWORD);
      const lines = jsonLines(output);
      expect(lines.find((l) => l.msg === "Hotel Operations Service is up")).toMatchObject({ role: "all" });
      expect(lines.find((l) => l.msg === "demo data seeded")).toMatchObject({
        groupCode: "DEMO",
        clientId,
        credentialsFile: file,
        users: expect.arrayContaining(["manager@demo.test"]),
      });
      expect(lines.at(-1)).toMatchObject({
        level: 60,
        msg: "uncaught exception",
        err: { type: "Error", message: "crash test: thrown", stack: expect.stringContaining("crash test: thrown") },
      });
    },
  );

  it("an unhandled rejection and a refused configuration are JSON lines too", { timeout: 60_000 }, async () => {
    const service = await startService({
      NODE_ENV: "production",
      DATABASE_URL: await freshDatabaseUrl(),
      DATA_DIR: mkdtempSync(join(tmpdir(), "hotelops-prod-start-")),
      ROLE: "api",
      NODE_OPTIONS: crashOnSignal("reject"),
    });
    service.child.kill("SIGUSR2");
    expect(await service.exited).toBe(1);
    expect(jsonLines(service.output()).at(-1)).toMatchObject({
      level: 60,
      msg: "unhandled rejection",
      err: { message: "crash test: rejected" },
    });

    const refused = await startService({ NODE_ENV: "production", PORT: "not-a-port" }).catch((e: unknown) => String(e));
    const text = String(refused).replace(/^Error: ROLE=all exited with 2: /, "");
    expect(jsonLines(text)).toEqual([
      expect.objectContaining({ level: 60, msg: expect.stringMatching(/PORT must be an integer/) }),
    ]);
  });
});
