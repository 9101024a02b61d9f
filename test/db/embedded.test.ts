import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { pino } from "pino";
import { freePort, startEmbeddedPostgres } from "../../src/db/embedded.ts";

const logger = pino({ level: "silent" });
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hotelops-embedded-"));
  dirs.push(dir);
  return join(dir, "pg");
}

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** Starts the embedded database in a separate Node process and resolves once it printed "ready". */
function startChild(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, "../helpers/embedded-child.ts"), dir, String(port)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("ready")) resolve(child);
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`child exited with ${code}: ${output}`)));
  });
}

describe("embedded PostgreSQL", () => {
  it(
    "stop() returns at once when PostgreSQL already died (kill -9 of the postmaster)",
    { timeout: 60_000 },
    async () => {
      const dir = tempDataDir();
      const db = await startEmbeddedPostgres({ dir, port: await freePort(), logger });
      const postmaster = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(postmaster, "SIGKILL");
      for (let i = 0; i < 100 && alive(postmaster); i++) await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      await db.stop();
      expect(Date.now() - started).toBeLessThan(2_000);
    },
  );

  it("keeps its data across a stop and a start (initdb runs only once)", { timeout: 60_000 }, async () => {
    const dir = tempDataDir();
    const first = await startEmbeddedPostgres({ dir, port: await freePort(), logger });
    await query(first.url, "create table kept (v text); insert into kept values ('across restarts')");
    await first.stop();
    expect(existsSync(join(dir, "postmaster.pid"))).toBe(false);

    const second = await startEmbeddedPostgres({ dir, port: await freePort(), logger });
    try {
      expect(await query<{ v: string }>(second.url, "select v from kept")).toEqual([{ v: "across restarts" }]);
    } finally {
      await second.stop();
    }
  });

  it(
    "refuses a directory whose owner is alive, and recovers once that owner was killed with -9",
    { timeout: 60_000 },
    async () => {
      const dir = tempDataDir();
      const port = await freePort();
      const child = await startChild(dir, port);
      const postmaster = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);

      await expect(startEmbeddedPostgres({ dir, port: await freePort(), logger })).rejects.toThrow(/in use by process/);
      expect(alive(postmaster)).toBe(true);

      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      // The situation to recover from: Node is gone, its PostgreSQL still runs and holds postmaster.pid.
      expect(alive(postmaster)).toBe(true);

      const restarted = await startEmbeddedPostgres({ dir, port, logger });
      try {
        expect(alive(postmaster)).toBe(false);
        expect(await query<{ ok: number }>(restarted.url, "select 1 as ok")).toEqual([{ ok: 1 }]);
      } finally {
        await restarted.stop();
      }
    },
  );

  it("says why it did not start instead of a bare undefined", { timeout: 60_000 }, async () => {
    const dir = tempDataDir();
    const running = await startEmbeddedPostgres({ dir, port: await freePort(), logger });
    try {
      // A second cluster on a port that is taken fails inside postgres; the reason must reach the error.
      const other = tempDataDir();
      const taken = Number(new URL(running.url).port);
      await expect(startEmbeddedPostgres({ dir: other, port: taken, logger })).rejects.toThrow(
        /did not start on port .*(in use|bind)/i,
      );
    } finally {
      await running.stop();
    }
  });
});
