// The service's start command, read from package.json ("start"), for the tests and benches that start the service
// as a process: they run exactly what `npm start` runs (Node's flags and the compiled dist/main.js).
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const repoRoot = join(import.meta.dirname, "..");

/** The arguments of `npm start` after `node`, e.g. ["--max-semi-space-size=8", "dist/main.js"] (cwd: `dir`). */
export function startArguments(dir = repoRoot): string[] {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.split(/\s+/);
  if (node !== "node") throw new Error(`npm start must run node, not: ${pkg.scripts.start}`);
  return args;
}
