// The unary fast path uses connect-es internals that do not follow semantic versioning (docs/adr/0002): this
// fails on an upgrade of connect-es, on a loosened pin, and on an internal symbol the ADR does not list.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const adr = readFileSync(join(root, "docs/adr/0002-unary-fast-path.md"), "utf8");
const pinned = /pinned to exactly \*\*(\d+\.\d+\.\d+)\*\*/.exec(adr)?.[1];

/** Every file of src/ (tests aside) that imports from connect-es's protocol entry points. */
function importers(): string[] {
  const files = readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
  );
  return files.filter((f) => readFileSync(join(root, "src", f), "utf8").includes('"@connectrpc/connect/protocol'));
}

/** Every symbol src/ takes from connect-es's protocol entry points (types too), by entry point. */
function usedInternals(): Map<string, Set<string>> {
  const source = importers()
    .map((f) => readFileSync(join(root, "src", f), "utf8"))
    .join("\n");
  const used = new Map<string, Set<string>>();
  const add = (entry: string, name: string) => used.set(entry, (used.get(entry) ?? new Set()).add(name));
  for (const m of source.matchAll(
    /import(?:\s+type)?\s*\{([^}]*)\}\s*from\s*"(@connectrpc\/connect\/protocol[\w-]*)"/g,
  ))
    for (const name of m[1]!.split(",").map((n) => n.replace(/^\s*type\s+/, "").trim()))
      if (name !== "") add(m[2]!, name);
  for (const m of source.matchAll(/import \* as (\w+) from "(@connectrpc\/connect\/protocol[\w-]*)"/g))
    for (const use of source.matchAll(new RegExp(`\\b${m[1]}\\.(\\w+)`, "g"))) add(m[2]!, use[1]!);
  return used;
}

describe("connect-es internals of the unary fast path", () => {
  it("are used at exactly the pinned version", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const installed = (
      JSON.parse(readFileSync(join(root, "node_modules/@connectrpc/connect/package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    expect(pinned).toBeDefined();
    expect(manifest.dependencies["@connectrpc/connect"]).toBe(pinned);
    expect(manifest.dependencies["@connectrpc/connect-node"]).toBe(pinned);
    expect(installed).toBe(pinned);
  });

  it("are imported by the files the ADR names only", () => {
    expect(importers().sort()).toEqual([
      "server/compression.ts",
      "server/dispatch.ts",
      "server/parse-errors.ts",
      "server/unary.ts",
    ]);
  });

  it("exist in the installed connect-es and are each listed in the ADR", async () => {
    const used = usedInternals();
    expect(used.size).toBe(4);
    const require = createRequire(import.meta.url);
    for (const [entry, names] of used) {
      const module = (await import(require.resolve(entry))) as Record<string, unknown>;
      const section = adr.slice(adr.indexOf(`\`${entry}\`:`));
      for (const name of names) {
        if (!/^[A-Z]/.test(name)) expect(module[name], `${entry} ${name}`).toBeDefined();
        expect(section.slice(0, section.indexOf("\n- ") > 0 ? section.indexOf("\n- ") : undefined)).toContain(
          `\`${name}\``,
        );
      }
    }
  });
});
