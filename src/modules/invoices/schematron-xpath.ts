import { createRequire } from "node:module";
import type { Document, Element, Node } from "slimdom";

/**
 * How the schematron runner (schematron.ts) evaluates a rule's XPath on fontoxpath: the reference way, one call per
 * `let` and per assertion on each context node, and the batched way used when a document is issued, one call per rule
 * for all its context nodes, which gives the same outcomes (schematron.test.ts compares both over valid and broken
 * documents). A call to fontoxpath costs about 0.1 ms before any work (static context, variables converted, result
 * built); GİB's rules on a 30-night invoice made about 300 such calls.
 */
type Variables = Record<string, unknown>;
export interface XPathOptions {
  namespaceResolver?: (prefix: string) => string | null;
}
/**
 * The part of fontoxpath used here, typed locally: its own typings pull in TypeScript's DOM library
 * (`/// <reference lib="dom" />`), which would change the global `Headers` the server code is checked against.
 */
interface FontoXPath {
  evaluateXPath: ((expr: string, node: Node, dom: null, vars: Variables, type: number, o?: XPathOptions) => unknown) & {
    ALL_RESULTS_TYPE: number;
  };
  evaluateXPathToBoolean(expr: string, node: Node, dom: null, vars: Variables, o?: XPathOptions): boolean;
  evaluateXPathToNodes<T = Node>(expr: string, node: Node, dom: null, vars: Variables, o?: XPathOptions): T[];
  evaluateXPathToString(expr: string, node: Node, dom: null, vars: Variables, o?: XPathOptions): string;
}
const fontoxpath = createRequire(import.meta.url)("fontoxpath") as FontoXPath;
const { evaluateXPath, evaluateXPathToString } = fontoxpath;
export const { evaluateXPathToBoolean, evaluateXPathToNodes } = fontoxpath;

/** A `let` or an assertion's test with the variables its expression names, found once when the schema is compiled. */
export interface Expr {
  name: string;
  xpath: string;
  vars: string[];
}

export interface Assertion extends Expr {
  /** assert: fails when false; report: fails when true. */
  isAssert: boolean;
  element: Element;
  /**
   * On an attribute: the test never leaves it (no `..`, no axis, no position), so within one document its outcome
   * depends only on the attribute's value; it runs once per distinct value (GİB checks every `@currencyID` and
   * `@unitCode` of a document, hundreds of attributes with a handful of values, and one of those tests scans the
   * whole document each time).
   */
  byValue: boolean;
}

export interface Rule {
  context: string;
  /** Where the context's last step names the node: `1 uri local` for an element, `2 uri local` for an attribute. */
  key: string;
  matches: (n: Node) => boolean;
  lets: Expr[];
  asserts: Assertion[];
  /** The batched test: `$nodes?* ! (boolean((test 1)), boolean((test 2)), ...)`, one boolean per node and test. */
  batch: string;
  /** The variables the batched test names (every test's). */
  batchVars: string[];
}

/** The variable that carries a rule's context nodes into its batched test (a name no schema of ours uses). */
const NODES = "schematron-context-nodes";

export function batchOf(asserts: readonly Assertion[]): { batch: string; batchVars: string[] } {
  const tests = asserts.map((a) => `boolean((${a.xpath}))`).join(", ");
  return { batch: `$${NODES}?* ! (${tests})`, batchVars: [...new Set(asserts.flatMap((a) => a.vars))] };
}

export const varsOf = (xpath: string): string[] => [...new Set([...xpath.matchAll(/\$([\w-]+)/g)].map((m) => m[1]!))];

/** Only the variables an expression refers to: fontoxpath converts every variable it is given on every call. */
export function pick(names: readonly string[], vars: Variables): Variables {
  const out: Variables = {};
  for (const n of names) if (n in vars) out[n] = vars[n];
  return out;
}

/** A `let`'s value as fontoxpath takes it back: null for the empty sequence, the item itself for one item. */
export function letValue(l: Expr, node: Node, vars: Variables, options: XPathOptions): unknown {
  const items = evaluateXPath(l.xpath, node, null, pick(l.vars, vars), evaluateXPath.ALL_RESULTS_TYPE, options);
  if (!Array.isArray(items)) throw new Error(`let ${l.name} is not a sequence`);
  if (items.length > 1) throw new Error(`let ${l.name} is a sequence of ${items.length} items`);
  return items[0] ?? null;
}

/**
 * Whether each assertion of `rule` holds on each of `nodes` (`vars`: the globals and, for a rule with `let`s, its
 * values on these nodes): [node][assertion]. Batched: one fontoxpath call; on any error the reference way, test by
 * test, which then raises the error it raised before.
 */
export function ruleOutcomes(rule: Rule, nodes: readonly Node[], vars: Variables, options: XPathOptions): boolean[][] {
  const reference = () =>
    nodes.map((node) =>
      rule.asserts.map((a) => evaluateXPathToBoolean(a.xpath, node, null, pick(a.vars, vars), options) === a.isAssert),
    );
  if (rule.asserts.length === 0) return reference();
  let flat: unknown;
  try {
    const given = { ...pick(rule.batchVars, vars), [NODES]: nodes };
    flat = evaluateXPath(rule.batch, nodes[0]!, null, given, evaluateXPath.ALL_RESULTS_TYPE, options);
  } catch {
    return reference();
  }
  const n = rule.asserts.length;
  if (!Array.isArray(flat) || flat.length !== nodes.length * n) return reference();
  return nodes.map((_, i) => rule.asserts.map((a, j) => flat[i * n + j] === a.isAssert));
}

/**
 * The first step of an expression that is only a path from the root (`/a:B/...` or `//a:B/...`, predicates
 * allowed, nothing after the path): its result is empty in a document without an element `a:B` (at the root for
 * `/`, anywhere for `//`). Undefined for any other expression.
 */
export function rootedPath(xpath: string): { anywhere: boolean; prefix: string; local: string } | undefined {
  let depth = 0;
  let bare = "";
  for (const ch of xpath.trim()) {
    if (ch === "[") depth++;
    else if (ch === "]") depth--;
    else if (depth === 0) bare += ch;
    if (depth < 0) return undefined;
  }
  const m = /^(\/\/?)([\w-]+):([\w-]+)(\/[\w-]+:[\w-]+)*$/.exec(bare);
  return m === null || depth !== 0 ? undefined : { anywhere: m[1] === "//", prefix: m[2]!, local: m[3]! };
}
export function keyOf(n: Node): string {
  const named = n as unknown as { namespaceURI: string | null; localName: string };
  return `${n.nodeType} ${named.namespaceURI ?? ""} ${named.localName}`;
}

/** Every element and attribute of a document, in document order. */
export function nodesOf(doc: Document): Node[] {
  const out: Node[] = [];
  const walk = (e: Element) => {
    out.push(e, ...e.attributes);
    for (const c of e.children) walk(c);
  };
  walk(doc.documentElement!);
  return out;
}

export function message(a: Element, node: Node, vars: Variables, options: XPathOptions): string {
  let out = "";
  for (const c of a.childNodes) {
    if (c.nodeType === 3) out += c.nodeValue ?? "";
    else if ((c as Element).localName === "value-of") {
      const select = (c as Element).getAttribute("select")!;
      out += evaluateXPathToString(select, node, null, pick(varsOf(select), vars), options);
    } else if ((c as Element).localName === "name")
      out += evaluateXPathToString(`name(${(c as Element).getAttribute("path") ?? ""})`, node, null, vars, options);
  }
  return out.replace(/\s+/g, " ").trim();
}
