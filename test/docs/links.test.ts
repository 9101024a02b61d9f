// `npm run check` fails on a broken relative link in README.md or docs/ (scripts/check-links.ts, one of its steps).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { brokenLinks, markdownFiles, slug } from "../../scripts/check-links.ts";

const run = promisify(execFile);
const root = new URL("../..", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "hotelops-links-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("relative links of README.md and docs/", () => {
  it("every link of this repository's README and docs points at a file and heading that exist", () => {
    expect(brokenLinks(root)).toEqual([]);
  });

  it("the checker names a missing file and a missing heading and exits 1; links in code and to the web are not checked", async () => {
    mkdirSync(join(scratch, "docs/staff"), { recursive: true });
    writeFileSync(
      join(scratch, "README.md"),
      "# Title\n\n[ok](docs/staff/panel.md#the-panel-panel) [gone](docs/staff/gone.md) [web](https://example.com/x.md)\n" +
        "`[code](nope.md)`\n\n```bash\n[fenced](nope.md)\n```\n",
    );
    writeFileSync(join(scratch, "docs/staff/panel.md"), "# The panel (`/panel`)\n\n[back](../../README.md#no-such)\n");
    const failed = await run(process.execPath, [join(root, "scripts/check-links.ts"), scratch]).then(
      () => undefined,
      (e: { code: number; stdout: string }) => e,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout.split("\n").filter((l) => l.includes(": "))).toEqual([
      "README.md: docs/staff/gone.md (no such file)",
      "docs/staff/panel.md: ../../README.md#no-such (no such heading)",
    ]);
    writeFileSync(join(scratch, "docs/staff/panel.md"), "# The panel (`/panel`)\n\n[back](../../README.md#title)\n");
    writeFileSync(join(scratch, "README.md"), "# Title\n\n[ok](docs/staff/panel.md#the-panel-panel)\n");
    await expect(run(process.execPath, [join(root, "scripts/check-links.ts"), scratch])).resolves.toBeDefined();
  });

  it("is a step of npm run check", () => {
    expect(readFileSync(join(root, "scripts/check.ts"), "utf8")).toContain('["scripts/check-links.ts"]');
  });

  it("makes GitHub's anchors", () => {
    expect(slug("The panel (`/panel`)")).toBe("the-panel-panel");
    expect(slug("Connectivity API (`/api/v1`, partners), release v1 beta")).toBe(
      "connectivity-api-apiv1-partners-release-v1-beta",
    );
  });
});

describe("the manual", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");

  it("README.md is at most 300 lines and starts with the two commands and the Debian packages the tests need", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
    for (const pkg of [
      "postgresql",
      "pgbouncer",
      "chromium",
      "protobuf-compiler",
      "protobuf-compiler-grpc",
      "python3-grpcio",
      "python3-protobuf",
      "python3-cryptography",
      "haproxy",
      "prometheus",
      "systemd",
      "libxml2-utils",
      "poppler-utils",
    ])
      expect(readme).toMatch(new RegExp(`apt-get install -y [^\`]*\\b${pkg}\\b`));
  });

  it("README.md and docs/ refer to nothing outside the repository and keep no dated diary", () => {
    for (const file of markdownFiles(root)) {
      const text = readFileSync(file, "utf8");
      const name = file.slice(root.length);
      expect(text, name).not.toMatch(/CONTRACT\.md|STYLE\.md|STACK-NOTES|\.\.\/shared|spec\/000|\bspec\b|uuidgen/);
      const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");
      expect(prose, name).not.toMatch(
        /\b[Oo]n 20\d\d-\d\d-\d\d\b|this session|\b[Rr]ound \d|\d\d:\d\d(-\d\d:\d\d)? UTC|[Tt]ried and/,
      );
    }
  });
});
