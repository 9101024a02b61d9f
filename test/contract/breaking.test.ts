// The breaking-change guard of `npm run check`: buf breaking against the committed release image.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const image = join(root, "proto-release/hotelops.v1.json");
const work = mkdtempSync(join(tmpdir(), "hotelops-breaking-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function breaking(mutate: (dir: string) => void): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(work, "case-"));
  cpSync(join(root, "proto"), join(dir, "proto"), { recursive: true });
  cpSync(join(root, "buf.yaml"), join(dir, "buf.yaml"));
  mutate(dir);
  try {
    execFileSync("buf", ["breaking", "proto", "--against", image], { cwd: dir, stdio: "pipe" });
    return { ok: true, output: "" };
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    return { ok: false, output: `${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}` };
  }
}

function edit(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to));
}

describe("breaking-change guard", () => {
  it("accepts the current proto/ and additions to it", () => {
    expect(breaking(() => {}).ok).toBe(true);
    const added = breaking((dir) =>
      edit(
        dir,
        "proto/hotelops/status/v1/status.proto",
        "string partner_api = 3;",
        "string partner_api = 3;\n  string region = 9;",
      ),
    );
    expect(added).toEqual({ ok: true, output: "" });
  });

  it("refuses a renumbered field and a removed RPC of the released contract", () => {
    const renumbered = breaking((dir) =>
      edit(dir, "proto/hotelops/status/v1/status.proto", "string api_version = 2;", "string api_version = 9;"),
    );
    expect(renumbered.ok).toBe(false);
    expect(renumbered.output).toMatch(/api_version/);
    const removed = breaking((dir) =>
      edit(dir, "proto/hotelops/status/v1/status.proto", "rpc GetStatus(", "rpc GetStatusRenamed("),
    );
    expect(removed.ok).toBe(false);
    expect(removed.output).toMatch(/GetStatus/);
  });
});
