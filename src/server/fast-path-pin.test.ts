// The unary fast path uses connect-es internals that do not follow semantic versioning (docs/adr/0002): this
// fails on an upgrade of connect-es, on a loosened pin, and on an internal symbol the ADR does not list.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const adr = readFileSync(join(root, "docs/adr/0002-unary-fast-path.md"), "utf8");
const pinned = /pinned to exactly \*\*(\d+\.\d+\.\d+)\*\*/.exec(adr)?.[1];

/** Every symbol src/server/unary.ts takes from connect-es's protocol entry points, by entry point. */
function usedInternals(): Map<string, Set<string>> {
  const source = readFileSync(join(import.meta.dirname, "unary.ts"), "utf8");
  const used = new Map<string, Set<string>>();
  const add = (entry: string, name: string) => used.set(entry, (used.get(entry) ?? new Set()).add(name));
  for (const m of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*"(@connectrpc\/connect\/protocol[\w-]*)"/g))
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
