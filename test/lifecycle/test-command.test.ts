// The README's test command must fail when a test fails: `npm test` run in a scratch copy of the repository on a
// one-line failing test file, then on a passing one (so the check itself can tell the two apart).
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "hotelops-test-command-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function copyRepository(): void {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) cpSync(join(root, file), join(scratch, file), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"), "dir");
}

/** `npm test -- <file>` in the scratch copy, with none of this run's vitest variables; resolves to its exit code. */
function npmTest(file: string): Promise<{ code: number | null; output: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "TEST"));
  return new Promise((resolve) => {
    let output = "";
    const child = spawn("npm", ["test", "--", file], { cwd: scratch, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("npm test", () => {
  it("exits non-zero when a test fails and zero when all pass", { timeout: 240_000 }, async () => {
    copyRepository();
    writeFileSync(
      join(scratch, "test/deliberately-failing.test.ts"),
      'import { expect, it } from "vitest";\nit("fails", () => expect(1).toBe(2));\n',
    );
    writeFileSync(
      join(scratch, "test/deliberately-passing.test.ts"),
      'import { expect, it } from "vitest";\nit("passes", () => expect(1).toBe(1));\n',
    );
    const failing = await npmTest("test/deliberately-failing.test.ts");
    expect(failing.output).toMatch(/1 failed/);
    expect(failing.code).not.toBe(0);
    const passing = await npmTest("test/deliberately-passing.test.ts");
    expect(passing.output).toMatch(/1 passed/);
    expect(passing.code).toBe(0);
  });
});
