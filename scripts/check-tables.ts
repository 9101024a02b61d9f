// npm run check step: fails when SQL in a module names a table the module does not own (scripts/table-owners.ts).
// A table counts as named after from / join / into / update / table (the forms our SQL uses), outside comments.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { tableOwners } from "./table-owners.ts";

const root = new URL("..", import.meta.url).pathname;
const modulesDir = join(root, "src/modules");
const reference = /\b(?:from|join|into|update|table)\s+([a-z_][a-z0-9_]*)\b/gi;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
  });
}

const problems: string[] = [];
for (const module of readdirSync(modulesDir).filter((n) => statSync(join(modulesDir, n)).isDirectory())) {
  for (const file of sources(join(modulesDir, module))) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
      for (const m of code.matchAll(reference)) {
        const table = m[1]!.toLowerCase();
        const owner = tableOwners[table];
        if (owner !== undefined && owner !== module) problems.push(`${relative(root, file)}:${i + 1}: module ${module} names table ${table} (owned by ${owner})`);
      }
    });
  }
}
const unknownOwners = Object.entries(tableOwners).filter(([, m]) => !statSync(join(modulesDir, m), { throwIfNoEntry: false })?.isDirectory());
for (const [table, m] of unknownOwners) problems.push(`scripts/table-owners.ts: table ${table} is owned by ${m}, which is not a module`);

if (problems.length > 0) {
  console.log(problems.join("\n"));
  console.log(`${problems.length} SQL reference(s) to tables of another module: call the owner's exported function instead.`);
  process.exit(1);
}
console.log("every module names only its own tables");
