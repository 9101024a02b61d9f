import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { listen } from "../../src/server/listen.ts";
import { loadConfig, ConfigError } from "../../src/config.ts";
import { freePort } from "../global-setup.ts";
import { startArguments } from "../../scripts/start-command.ts";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  // a failed assertion must not leave a service (and its PostgreSQL) running
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function startMain(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let out = "";
  const child = spawn(process.execPath, startArguments(), {
    cwd: join(import.meta.dirname, "../.."),
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  children.push(child);
  return { child, output: () => out };
}

async function waitReady(base: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("service did not become ready");
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code)),
  );
}

describe("graceful shutdown", () => {
  it("finishes an in-flight request, then refuses new connections", async () => {
    let arrived!: () => void;
    const handling = new Promise<void>((resolve) => (arrived = resolve));
    const listener = await listen(
      (_req, res) => {
        arrived();
        setTimeout(() => res.end("done"), 400);
      },
      { port: 0, host: "127.0.0.1" },
    );
    const base = `http://127.0.0.1:${listener.port}`;
    const inFlight = fetch(base).then((r) => r.text());
    // closing once the handler has the request (a fixed pause raced a slow box: the request was not in yet)
    await handling;
    const closing = listener.close(5_000);
    expect(await inFlight).toBe("done");
    await closing;
    await expect(fetch(base)).rejects.toThrow();
  });
});

describe("the start command on an embedded database", () => {
  it("starts, serves, stops on SIGTERM, and keeps its data across a restart", { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hotelops-main-"));
    dirs.push(dataDir);
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      HOST: "127.0.0.1",
    };
    const base = `http://127.0.0.1:${env.PORT}`;

    const first = startMain(env);
    await waitReady(base);
    // the child's stdout may reach us after its HTTP answers do
    for (let i = 0; i < 100 && !first.output().includes("/api/v1/status"); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(first.output()).toContain(`localhost:${env.PORT}/api/v1/status`);
    expect(first.output()).toContain(`localhost:${env.PORT}/docs`);
    expect(first.output()).toContain(`localhost:${env.PORT}/openapi.json`);
    expect(await (await fetch(`${base}/api/v1/status`)).json()).toMatchObject({ partnerApi: "enabled" });
    // change data directly in the embedded database
    const client = new pg.Client({
      connectionString: `postgres://hotelops:hotelops@127.0.0.1:${env.EMBEDDED_PG_PORT}/hotelops`,
    });
    await client.connect();
    await client.query("update platform_settings set partner_api_enabled = false");
    await client.end();
    first.child.kill("SIGTERM");
    expect(await exited(first.child)).toBe(0);

    const second = startMain(env);
    try {
      await waitReady(base);
      expect(await (await fetch(`${base}/api/v1/status`)).json()).toMatchObject({ partnerApi: "disabled" });
    } finally {
      second.child.kill("SIGTERM");
      expect(await exited(second.child)).toBe(0);
    }
  });

  it("recovers after kill -9 left PostgreSQL running with a stale pid file", { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hotelops-kill-"));
    dirs.push(dataDir);
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      HOST: "127.0.0.1",
    };
    const base = `http://127.0.0.1:${env.PORT}`;
    const first = startMain(env);
    await waitReady(base);
    first.child.kill("SIGKILL");
    await exited(first.child);
    const second = startMain(env);
    try {
      await waitReady(base);
      expect((await fetch(`${base}/api/v1/status`)).status).toBe(200);
    } finally {
      second.child.kill("SIGTERM");
      expect(await exited(second.child)).toBe(0);
    }
  });
});

describe("configuration", () => {
  it("refuses bad values with one message naming each problem", () => {
    expect(() =>
      loadConfig({
        PORT: "x",
        ROLE: "boss",
        DATABASE_URL: "mysql://x",
        NODE_ENV: "production",
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      }),
    ).toThrow(ConfigError);
    try {
      loadConfig({ PORT: "x", ROLE: "boss", TLS_CERT_FILE: "a" });
    } catch (err) {
      expect(String(err)).toMatch(/PORT/);
      expect(String(err)).toMatch(/ROLE/);
      expect(String(err)).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
    }
  });

  it("bad config stops the start command with exit code 2", async () => {
    const { child, output } = startMain({ PORT: "not-a-port" });
    expect(await exited(child)).toBe(2);
    expect(output()).toMatch(/PORT must be an integer/);
  });

  it("a multi-host DATABASE_URL stops the start command with exit code 2 and says to use a proxy", async () => {
    const { child, output } = startMain({ DATABASE_URL: "postgres://u:p@db1:5432,db2:5432/hotelops" });
    expect(await exited(child)).toBe(2);
    expect(output()).toMatch(/DATABASE_URL names more than one host \(db1:5432,db2:5432\)/);
    expect(output()).toMatch(/HAProxy or PgBouncer/);
    expect(output()).not.toMatch(/TypeError|Invalid URL/);
    expect(() => loadConfig({ DATABASE_URL: "postgres://x/db", DATABASE_DIRECT_URL: "postgres://a,b/db" })).toThrow(
      /DATABASE_DIRECT_URL names more than one host/,
    );
    expect(() => loadConfig({ DATABASE_URL: "postgres://u:p@ss@h:x/db" })).toThrow(/DATABASE_URL is not a valid URL/);
  });

  it("an answer cache larger than a quarter of npm start's heap limit stops the start command with exit code 2", async () => {
    const { child, output } = startMain({ ANSWER_CACHE_BYTES: String(64 * 1024 * 1024) });
    expect(await exited(child)).toBe(2);
    expect(output()).toMatch(/ANSWER_CACHE_BYTES must be at most a quarter of this process's heap limit/);
  });
});
