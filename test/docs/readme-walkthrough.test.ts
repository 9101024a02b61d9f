// The README's first hour and the partners' getting-started guide, run as written: their bash blocks through bash
// against `npm start`'s demo hotel (the start block's own environment, a fresh data directory), in order, sharing
// their variables as one terminal would. Only the ports differ: the service's 8080 and the receiver's 8443 become
// free ports, so the run never collides with a service already running here.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../global-setup.ts";
import { bash, bashBlocks, root } from "../helpers/docs-shell.ts";
import { killAllServices, startService, until, type ServiceProcess } from "../helpers/service-process.ts";

const dataDirs: string[] = [];
const services: ServiceProcess[] = [];
afterAll(async () => {
  for (const service of services) {
    service.child.kill("SIGTERM");
    await service.exited;
  }
  killAllServices();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs the blocks before the `... npm start` block, starts the service as that block says, waits for the demo seed
 * and runs the blocks after it; resolves with the output of the blocks after the start.
 */
async function walk(blocks: string[]): Promise<{ output: string; service: ServiceProcess }> {
  const dataDir = mkdtempSync(join(tmpdir(), "hotelops-walk-"));
  chmodSync(dataDir, 0o755);
  dataDirs.push(dataDir);
  const [port, receiverPort, pgPort] = [await freePort(), await freePort(), await freePort()];
  const ports = (block: string) =>
    block.replaceAll("localhost:8080", `localhost:${port}`).replaceAll("8443", String(receiverPort));
  // the operator CLI (npm run ops) finds the running service's embedded PostgreSQL through these, as in a terminal
  const env = { DATA_DIR: join(dataDir, ".data"), EMBEDDED_PG_PORT: String(pgPort) };
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
  const service = await startService({ ...assignments, ...env, PORT: String(port), LOG_LEVEL: "warn" });
  services.push(service);
  // ready before the demo is seeded: a newcomer reads the logins from the banner, printed once it is
  await until(async () => service.output().includes("Demo data seeded"), 60_000, "the demo seed");

  const after = await bash(
    blocks
      .slice(start + 1)
      .map(ports)
      .join("\n"),
    env,
  );
  expect(after.code, `${after.output}\n${service.output()}`).toBe(0);
  return { output: after.output, service };
}

describe("the README's first hour", () => {
  it("runs as written on a fresh npm start: staff login, a booking, the partner feed and event, a verified webhook", async () => {
    const { output, service } = await walk(bashBlocks("README.md", "## Your first hour"));
    expect(output).toContain('"status":"operational"');
    expect(output).toMatch(/"status":"GUARANTEED"/);
    expect(output, service.output()).toMatch(/"status":"PROCESSED","reservationId":"[^"]+","reservationCode":"R\d+"/);
    // the receiver's lines (curl's answers above them end without a newline)
    expect(output, output).toMatch(/verified webhook\.test \{/);
    expect(output).toMatch(/verified reservation\.created \{/);
    expect(output).not.toMatch(/rejected (webhook|reservation)/);
  }, 360_000);
});

describe("docs/partners/getting-started.md", () => {
  it("runs as written on a fresh npm start: credentials, mappings, a callback, ARI read and write, a booking made, changed and cancelled, the feeds", async () => {
    const { output, service } = await walk(bashBlocks("docs/partners/getting-started.md"));
    expect(output).toContain('"apiRelease":"v1 beta"');
    expect(output).toContain('"externalCode":"CM-DBL"');
    expect(output).toContain('{"propertyCode":"DEMO-IST","changes":2,"cells":2}');
    expect(output).toMatch(/"priceMinor":310000,"minStay":2/);
    expect(output, service.output()).toMatch(/"status":"PROCESSED","reservationId":"[^"]+","reservationCode":"R\d+"/);
    // the receiver verified every callback the guide promises, and refused none
    for (const type of [
      "ari.updated",
      "partner_message.processed",
      "reservation.created",
      "reservation.updated",
      "reservation.cancelled",
    ])
      expect(output, output).toMatch(new RegExp(`verified ${type.replace(".", "\\.")} \\{`));
    expect(output).not.toMatch(/rejected (ari|partner_message|reservation)/);
    expect(output).not.toMatch(/partner_message\.rejected/);
    expect(output).toMatch(/"roomTypeCodes":\[\{"code":"DBL","externalCode":"CM-DBL"\}\]/);
    expect(output).toMatch(/"eventType":"ari\.updated"/);
  }, 360_000);
});
