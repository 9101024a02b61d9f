// npm run check: buf lint, generated code identical to a fresh `buf generate`, buf breaking against the released
// contract, OpenAPI document and Python stubs up to date, Redocly lint of the OpenAPI document, tsc --noEmit, eslint, knip, table ownership and module cycles, prettier,
// relative links of README.md and docs/.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const failures: string[] = [];

function step(name: string, cmd: string, args: string[]): void {
  process.stdout.write(`check: ${name} ... `);
  try {
    execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    console.log("ok");
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    console.log("FAILED");
    console.log(`${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
    failures.push(name);
  }
}

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  try {
    walk(dir);
  } catch {
    // a missing directory compares as empty
  }
  return out;
}

function generatedUpToDate(template: string | undefined, committed: string): void {
  process.stdout.write(`check: ${committed} matches buf generate ... `);
  const tmp = mkdtempSync(join(tmpdir(), "hotelops-gen-"));
  try {
    execFileSync("buf", ["generate", ...(template ? ["--template", template] : []), "-o", tmp], {
      cwd: root,
      stdio: "pipe",
    });
    const fresh = files(join(tmp, committed));
    const current = files(join(root, committed));
    const diff = [...new Set([...fresh.keys(), ...current.keys()])].filter((k) => fresh.get(k) !== current.get(k));
    if (diff.length === 0) console.log("ok");
    else {
      console.log(`FAILED: run npm run generate (differs: ${diff.slice(0, 10).join(", ")})`);
      failures.push(`${committed} up to date`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

step("buf lint", "buf", ["lint"]);
generatedUpToDate(undefined, "gen");
generatedUpToDate("test/buf.gen.yaml", "test/gen");
// no breaking change against the released contract (npm run release:proto records a release)
step("buf breaking against proto-release/hotelops.v1.json", "buf", [
  "breaking",
  "proto",
  "--against",
  "proto-release/hotelops.v1.json",
]);
step("openapi/ and sdk/src/services.ts match proto/ (npm run openapi)", "node", ["scripts/openapi.ts", "--check"]);
// Redocly's recommended rules (redocly.yaml), offline: no telemetry, no update check
process.env.REDOCLY_TELEMETRY = "off";
process.env.REDOCLY_SUPPRESS_UPDATE_NOTICE = "true";
step("redocly lint openapi/hotelops.v1.json (redocly.yaml)", "redocly", ["lint", "openapi/hotelops.v1.json"]);
// skipped with a note where protoc/grpc_python_plugin are missing; .ci/run installs them
step("sdk-python stubs match proto/ (npm run generate)", "node", ["scripts/generate-python.ts", "--check"]);
step("tsc --noEmit", "tsc", ["-p", "."]);
step("tsc --noEmit (panel)", "tsc", ["-p", "panel"]);
step("eslint (module boundaries: another module only through its index.ts)", "eslint", [".", "--max-warnings=0"]);
// unused files, exports, types and dependencies (knip.json: entry points are main, scripts, benches, tests, panel, sdk)
step("knip: no unused files, exports or dependencies (knip.json)", "knip", ["--no-progress"]);
step("table ownership and module cycles (scripts/check-modules.ts)", "node", ["scripts/check-modules.ts"]);
step("prettier --check (npm run format writes it)", "prettier", ["--check", "."]);
step("relative links of README.md and docs/ (scripts/check-links.ts)", "node", ["scripts/check-links.ts"]);

if (failures.length > 0) {
  console.error(`check failed: ${failures.join(", ")}`);
  process.exit(1);
}
console.log("check: all ok");
