/**
 * google.api.http path templates: `/v1/{name=shelves/*}/books/{book.id}:publish`.
 * Template = "/" Segments [ Verb ]; Segment = "*" | "**" | LITERAL | Variable; Variable = "{" FieldPath [ "=" Segments ] "}".
 */
type Segment =
  | { kind: "literal"; value: string }
  | { kind: "wild" } // *
  | { kind: "deep" } // **
  | { kind: "var"; field: string; segments: Segment[] };

export interface PathTemplate {
  source: string;
  segments: Segment[];
  verb: string | undefined;
  /** Field paths bound by the path, e.g. ["reservation.id"]. */
  fields: string[];
}

export function parseTemplate(source: string): PathTemplate {
  if (!source.startsWith("/")) throw new Error(`path template must start with "/": ${source}`);
  let body = source.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf("/");
  const colon = body.indexOf(":", Math.max(lastSlash, body.lastIndexOf("}")));
  if (colon !== -1) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
  }
  const fields: string[] = [];
  const segments: Segment[] = [];
  for (const raw of splitTop(body)) {
    if (raw.startsWith("{")) {
      if (!raw.endsWith("}")) throw new Error(`bad variable in ${source}`);
      const inner = raw.slice(1, -1);
      const eq = inner.indexOf("=");
      const field = eq === -1 ? inner : inner.slice(0, eq);
      const pattern = eq === -1 ? "*" : inner.slice(eq + 1);
      fields.push(field);
      segments.push({ kind: "var", field, segments: pattern.split("/").map(plain) });
    } else segments.push(plain(raw));
  }
  const t: PathTemplate = { source, segments, verb, fields };
  const flat = flatten(t);
  const deep = flat.findIndex((f) => f.seg.kind === "deep");
  if (deep !== -1 && deep !== flat.length - 1) {
    // the grammar allows "**" only as the last segment; anywhere else the route could never match
    throw new Error(`"**" must be the last segment: ${source}`);
  }
  flats.set(t, flat);
  return t;
}

/**
 * Variables' own segments inlined, each tagged with its variable; `prefix`: the template's leading literal
 * segments as a path starts with them ("api/v1/status"), so most templates refuse a path with one string compare;
 * `literal`: the prefix is the whole template.
 */
type Flat = { seg: Segment; owner?: string }[] & { prefix?: string; literal?: boolean };

/** Computed once per template. */
const flats = new WeakMap<PathTemplate, Flat>();

function flatten(t: PathTemplate): Flat {
  const flat: Flat = [];
  for (const seg of t.segments) {
    if (seg.kind === "var") for (const inner of seg.segments) flat.push({ seg: inner, owner: seg.field });
    else flat.push({ seg });
  }
  const literals: string[] = [];
  for (const { seg, owner } of flat) {
    if (seg.kind !== "literal" || owner !== undefined) break;
    literals.push(seg.value);
  }
  flat.prefix = literals.join("/");
  flat.literal = literals.length === flat.length;
  return flat;
}

function plain(raw: string): Segment {
  if (raw === "*") return { kind: "wild" };
  if (raw === "**") return { kind: "deep" };
  return { kind: "literal", value: raw };
}

/** Splits on "/" outside braces (a variable's own pattern may contain "/"). */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "{") depth++;
    else if (s[i] === "}") depth--;
    else if (s[i] === "/" && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** The one path a template of literals alone (no variables, wildcards or verb) matches; undefined for any other. */
export function literalPath(t: PathTemplate): string | undefined {
  const flat = flats.get(t) ?? flatten(t);
  return flat.literal && t.verb === undefined ? `/${flat.prefix}` : undefined;
}

/** Matches a request path; returns the variables (percent-decoded) or undefined. */
export function matchTemplate(t: PathTemplate, path: string): Map<string, string> | undefined {
  let flat = flats.get(t);
  if (flat === undefined) flats.set(t, (flat = flatten(t))); // a template built by hand, not by parseTemplate
  const start = path.startsWith("/") ? 1 : 0;
  if (!path.startsWith(flat.prefix!, start)) return undefined;
  let rest = path.slice(start);
  if (t.verb !== undefined) {
    if (!rest.endsWith(`:${t.verb}`)) return undefined;
    rest = rest.slice(0, -(t.verb.length + 1));
  }
  // a template of literals alone (no variables or wildcards) matches its own path and nothing else
  if (flat.literal) return rest === flat.prefix ? new Map() : undefined;
  const parts = rest === "" ? [] : rest.split("/");
  const captured = new Map<string, string[]>();
  const ok = walk(flat, 0, parts, 0, captured);
  if (!ok) return undefined;
  const vars = new Map<string, string>();
  for (const [field, values] of captured) {
    try {
      vars.set(field, values.map((v) => decodeURIComponent(v)).join("/"));
    } catch {
      return undefined;
    }
  }
  return vars;
}

function walk(flat: Flat, i: number, parts: string[], j: number, captured: Map<string, string[]>): boolean {
  if (i === flat.length) return j === parts.length;
  const { seg, owner } = flat[i]!;
  const take = (n: number): void => {
    if (owner === undefined) return;
    const list = captured.get(owner) ?? [];
    list.push(...parts.slice(j, j + n));
    captured.set(owner, list);
  };
  if (seg.kind === "deep") {
    // ** must be last (besides the verb); it takes everything that is left, possibly nothing
    if (owner !== undefined) captured.set(owner, [...(captured.get(owner) ?? []), ...parts.slice(j)]);
    return i === flat.length - 1;
  }
  if (j >= parts.length) return false;
  const part = parts[j]!;
  if (seg.kind === "literal" ? part !== seg.value : part === "") return false;
  take(1);
  return walk(flat, i + 1, parts, j + 1, captured);
}
