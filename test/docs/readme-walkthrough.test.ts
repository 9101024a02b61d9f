// The README's first hour, run as written: its bash blocks through bash against `npm start`'s demo hotel (the start
// block's own environment, a fresh data directory), in order, sharing their variables as one terminal would. Only
// the ports differ: the service's 8080 and the receiver's 8443 become free ports, so the run never collides with a
// service already running here.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../global-setup.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";

const root = join(import.meta.dirname, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "hotelops-readme-"));
chmodSync(dataDir, 0o755);
let service: ServiceProcess | undefined;
afterAll(async () => {
  service?.child.kill("SIGTERM");
  await service?.exited;
  killAllServices();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The bash blocks of the README's "Your first hour". */
function firstHourBlocks(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const hour = readme.slice(
    readme.indexOf("## Your first hour"),
    readme.indexOf("\n## ", readme.indexOf("## Your first hour") + 5),
  );
  return [...hour.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn("bash", ["-c", `set -eo pipefail\n${script}`], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("the README's first hour", () => {
  it("runs as written on a fresh npm start: staff login, a booking, the partner feed and event, a verified webhook", async () => {
    const [port, receiverPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    const ports = (block: string) =>
      block.replaceAll("localhost:8080", `localhost:${port}`).replaceAll("8443", String(receiverPort));
    // the operator CLI (npm run ops) finds the running service's embedded PostgreSQL through these, as in a terminal
    const env = { DATA_DIR: join(dataDir, ".data"), EMBEDDED_PG_PORT: String(pgPort) };
    const blocks = firstHourBlocks();
    const start = blocks.findIndex((b) => /^\S*=?.*npm start\s*$/m.test(b.trim()) && b.trim().split("\n").length === 1);
    expect(start).toBeGreaterThan(-1);

    const before = await bash(blocks.slice(0, start).map(ports).join("\n"), env);
    expect(before.code, before.output).toBe(0);

    // "VAR=value ... npm start": the same environment for the service started as npm start runs it
    const assignments = Object.fromEntries(
      [...blocks[start]!.matchAll(/(\w+)=(\S+)/g)].map((m) => [
        m[1]!,
        m[2]!.startsWith("scratch/") ? join(root, m[2]!) : m[2]!,
      ]),
    );
    service = await startService({ ...assignments, ...env, PORT: String(port), LOG_LEVEL: "warn" });
    // ready before the demo is seeded: a newcomer reads the logins from the banner, printed once it is
    await until(async () => service!.output().includes("Demo data seeded"), 60_000, "the demo seed");

    const after = await bash(
      blocks
        .slice(start + 1)
        .map(ports)
        .join("\n"),
      env,
    );
    expect(after.code, after.output).toBe(0);
    expect(after.output).toContain('"status":"operational"');
    expect(after.output).toMatch(/"status":"GUARANTEED"/);
    expect(after.output, service.output()).toMatch(
      /"status":"PROCESSED","reservationId":"[^"]+","reservationCode":"R\d+"/,
    );
    // the receiver's lines (curl's answers above them end without a newline)
    expect(after.output, after.output).toMatch(/verified webhook\.test \{/);
    expect(after.output).toMatch(/verified reservation\.created \{/);
    expect(after.output).not.toMatch(/rejected (webhook|reservation)/);
  }, 240_000);
});
