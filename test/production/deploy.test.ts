import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { repoRoot, startArguments } from "../../scripts/start-command.ts";
import { deployPath, envFileTemplate, renderUnit, unitCommand, type UnitRole } from "../helpers/deploy.ts";
import { requireBinary } from "../helpers/prerequisites.ts";

// deploy/ as an operator copies it: the files the production tests start from (test/helpers/deploy.ts) checked by
// the tools that read them on a server (systemd-analyze, promtool, haproxy).
const roles: UnitRole[] = ["api", "worker"];

describe("deploy/", () => {
  it("the units run exactly what npm start runs (Node's heap flags and dist/main.js), one role each", () => {
    for (const role of roles) {
      const unit = unitCommand(role, "1");
      expect(unit.args).toEqual(startArguments());
      expect(unit.env.ROLE).toBe(role);
      expect(unit.env.METRICS_PORT).toMatch(/^\d+$/);
      const text = readFileSync(deployPath("systemd", `hotelops-${role}@.service`), "utf8");
      expect(text).toMatch(/^Restart=always$/m);
      // a stop waits SHUTDOWN_GRACE_MS (10 s) + 2 s at most: systemd must not SIGKILL before
      const stopSec = Number(/^TimeoutStopSec=(\d+)$/m.exec(text)?.[1]);
      expect(stopSec).toBeGreaterThan(Number(envFileTemplate().SHUTDOWN_GRACE_MS) / 1000 + 2);
    }
    expect(unitCommand("api", "2").env.PORT).toBe("8082");
  });

  it("systemd-analyze verify passes on both units (paths rendered to this checkout)", { timeout: 30_000 }, () => {
    requireBinary("systemd-analyze", "systemd");
    const dir = mkdtempSync(join(tmpdir(), "units-"));
    try {
      for (const role of roles) {
        const file = join(dir, `hotelops-${role}@.service`);
        writeFileSync(file, renderUnit(role, repoRoot, deployPath("hotelops.env")));
        const r = spawnSync("systemd-analyze", ["verify", join(dir, `hotelops-${role}@1.service`)], {
          encoding: "utf8",
        });
        expect({ status: r.status, stderr: r.stderr.trim() }).toEqual({ status: 0, stderr: "" });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the environment file is a valid production configuration once its CHANGE-ME values are filled", () => {
    const text = readFileSync(deployPath("hotelops.env"), "utf8");
    const env = Object.fromEntries(
      Object.entries(envFileTemplate()).map(([k, v]) => [
        k,
        v.replace("CHANGE-ME", k === "WEBHOOK_SECRET_KEY" ? Buffer.alloc(32, 7).toString("base64") : "secret"),
      ]),
    );
    const config = loadConfig({ ...env, ...unitCommand("api").env });
    expect(config.nodeEnv).toBe("production");
    expect(config.metrics.port).toBe(9091);
    // every variable it names, commented out or not, is one docs/operations/configuration.md describes
    const documented = readFileSync(join(repoRoot, "docs/operations/configuration.md"), "utf8");
    for (const [, name] of text.matchAll(/^#?([A-Z][A-Z0-9_]+)=/gm)) expect(documented).toContain(`\`${name}\``);
    // and the commented sampler lines are valid too
    const sampled = loadConfig({
      ...env,
      OTEL_TRACES_SAMPLER: /^#OTEL_TRACES_SAMPLER=(.*)$/m.exec(text)![1]!,
      OTEL_TRACES_SAMPLER_ARG: /^#OTEL_TRACES_SAMPLER_ARG=(.*)$/m.exec(text)![1]!,
    });
    expect(sampled.tracesSampler).toEqual({ name: "parentbased_traceidratio", ratio: 0.1 });
  });

  it("promtool checks the alert rules and their unit tests pass", { timeout: 30_000 }, () => {
    requireBinary("promtool", "prometheus");
    const check = spawnSync("promtool", ["check", "rules", deployPath("prometheus", "hotelops-rules.yml")], {
      encoding: "utf8",
    });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const test = spawnSync("promtool", ["test", "rules", "hotelops-rules.test.yml"], {
      cwd: deployPath("prometheus"),
      encoding: "utf8",
    });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    // every metric the rules read is one the service exports (docs/operations/metrics.md lists them)
    const rules = readFileSync(deployPath("prometheus", "hotelops-rules.yml"), "utf8");
    const metricsDoc = readFileSync(join(repoRoot, "docs/operations/metrics.md"), "utf8");
    for (const [name] of rules.matchAll(/hotelops_[a-z_]+/g)) expect(metricsDoc).toContain(name);
  });

  it("haproxy -c accepts the HAProxy configuration", () => {
    requireBinary("haproxy", "haproxy");
    const r = spawnSync("haproxy", ["-c", "-f", deployPath("haproxy", "haproxy.cfg")], { encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});
