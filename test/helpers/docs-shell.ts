// The shell examples of the docs, as the docs tests run them: their blocks through bash from the repository's
// directory, in order, sharing their variables as one terminal would (test/docs/readme-walkthrough.test.ts,
// test/docs/examples.test.ts). Convention (docs/contributors/testing.md): a ```bash or ```sh block runs; one whose
// info string says `not-run` (```sh not-run) needs what a test cannot give it (a production host, systemd, a
// package install) and is left out, the page saying so next to it.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const root = join(import.meta.dirname, "../..");

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  run: boolean;
  code: string;
}

/** Every ```sh / ```bash block of a markdown file, run or not. */
export function shellBlocksOf(file: string): ShellBlock[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(/^```(?:bash|sh)([^\n]*)\n([\s\S]*?)^```/gm)].map((m) => ({
    line: text.slice(0, m.index).split("\n").length,
    run: !/\bnot-run\b/.test(m[1]!),
    code: m[2]!,
  }));
}

/** The runnable shell blocks of a markdown file, or of one of its sections (from its heading to the next of that level). */
export function bashBlocks(file: string, section?: string): string[] {
  let text = readFileSync(join(root, file), "utf8");
  if (section !== undefined) {
    const at = text.indexOf(section);
    text = text.slice(at, text.indexOf("\n## ", at + 5));
  }
  return [...text.matchAll(/^```(?:bash|sh)([^\n]*)\n([\s\S]*?)^```/gm)]
    .filter((m) => !/\bnot-run\b/.test(m[1]!))
    .map((m) => m[2]!);
}

/** Runs a script through `bash -c` with `set -eo pipefail` from the repository's directory; output is stdout and stderr. */
export function bash(
  script: string,
  env: Record<string, string>,
  timeoutMs = 240_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn("bash", ["-c", `set -eo pipefail\n${script}`], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    // a step that hangs ends the run with what it printed so far, instead of the test's timeout saying nothing
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
