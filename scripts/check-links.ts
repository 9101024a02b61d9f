// Relative links of README.md and docs/**/*.md must point at a file that exists (and, with a #fragment into a
// Markdown file, at one of its headings). Part of `npm run check`; `node scripts/check-links.ts [root]` alone.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The Markdown files checked: README.md and everything under docs/. */
export function markdownFiles(root: string): string[] {
  const out = [join(root, "README.md")].filter((f) => existsSync(f));
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".md")) out.push(p);
    }
  };
  walk(join(root, "docs"));
  return out;
}

/** Text outside fenced code blocks. */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Text outside fenced code blocks and inline code: links shown as code are not links. */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of withoutFences(readFileSync(file, "utf8")).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every broken relative link, as "file: target (reason)". */
export function brokenLinks(root: string): string[] {
  const problems: string[] = [];
  for (const file of markdownFiles(root)) {
    const text = prose(readFileSync(file, "utf8"));
    const targets = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ...
      const [path = "", fragment] = target.split("#", 2);
      const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(root, file)}: ${target}`;
      if (!existsSync(resolved)) {
        problems.push(`${where} (no such file)`);
        continue;
      }
      if (fragment !== undefined && fragment !== "" && resolved.endsWith(".md")) {
        if (!anchorsOf(resolved).has(fragment.toLowerCase())) problems.push(`${where} (no such heading)`);
      }
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = resolve(process.argv[2] ?? new URL("..", import.meta.url).pathname);
  const problems = brokenLinks(root);
  for (const p of problems) console.log(p);
  if (problems.length > 0) {
    console.log(`${problems.length} broken relative link(s) in README.md or docs/`);
    process.exit(1);
  }
}
