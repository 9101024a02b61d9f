// npm run check step: fails when SQL in a module names a table the module does not own (scripts/table-owners.ts),
// when modules import each other in a cycle (a cycle means a responsibility sits in the wrong module), or when a
// test beside the code needs the database or server helpers (those tests belong under test/).
// A table counts as named after from / join / into / update / table (the forms our SQL uses), outside comments.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { tableOwners } from "./table-owners.ts";

const root = new URL("..", import.meta.url).pathname;
const modulesDir = join(root, "src/modules");
const reference = /\b(?:from|join|into|update|table)\s+([a-z_][a-z0-9_]*)\b/gi;

/** The .ts files under dir: the code (default) or only its tests. */
function sources(dir: string, tests = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" ? [] : sources(p, tests);
    return p.endsWith(".ts") && p.endsWith(".test.ts") === tests ? [p] : [];
  });
}

const problems: string[] = [];
const modules = readdirSync(modulesDir).filter((n) => statSync(join(modulesDir, n)).isDirectory());
const importsOf = new Map<string, Set<string>>(modules.map((m) => [m, new Set<string>()]));
for (const module of modules) {
  for (const file of sources(join(modulesDir, module))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/from "\.\.\/([a-z-]+)\//g)) if (m[1] !== module) importsOf.get(module)!.add(m[1]!);
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "").replace(/^\s*\/?\*.*$/, "");
      for (const m of code.matchAll(reference)) {
        const table = m[1]!.toLowerCase();
        const owner = tableOwners[table];
        if (owner === undefined || owner === module) continue;
        problems.push(`${relative(root, file)}:${i + 1}: module ${module} names table ${table} (owned by ${owner})`);
      }
    });
  }
}
// module import cycles, each reported once from its smallest module name
const seen = new Set<string>();
for (const start of modules) {
  const walk = (m: string, path: string[]): void => {
    for (const next of importsOf.get(m) ?? []) {
      if (next === start) {
        const cycle = [...path, start].join(" -> ");
        const key = [...path].sort().join(",");
        if (!seen.has(key) && path.every((p) => p >= start)) {
          seen.add(key);
          problems.push(`module import cycle: ${cycle}`);
        }
      } else if (!path.includes(next) && next > start) walk(next, [...path, next]);
    }
  };
  walk(start, [start]);
}

// test layout: tests beside the code are pure units; database and server tests live under test/
const besideCode = [...sources(join(root, "src"), true), ...sources(join(root, "sdk/src"), true)];
for (const file of besideCode) {
  if (/from "(\.\.\/)+test\/helpers\//.test(readFileSync(file, "utf8")))
    problems.push(
      `${relative(root, file)}: a test beside the code imports test/helpers: move it under test/ (docs/contributors/testing.md, "Test layout")`,
    );
}

const unknownOwners = Object.entries(tableOwners).filter(
  ([, m]) => !statSync(join(modulesDir, m), { throwIfNoEntry: false })?.isDirectory(),
);
for (const [table, m] of unknownOwners)
  problems.push(`scripts/table-owners.ts: table ${table} is owned by ${m}, which is not a module`);

if (problems.length > 0) {
  console.log(problems.join("\n"));
  console.log(
    `${problems.length} problem(s): call the owning module's exported function instead of naming its table; break a cycle by moving the responsibility.`,
  );
  process.exit(1);
}
console.log("no module names another's tables; no module import cycles");
