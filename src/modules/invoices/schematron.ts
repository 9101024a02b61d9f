import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseXmlDocument, type Document, type Element, type Node } from "slimdom";

/**
 * An ISO Schematron runner on fontoxpath (an XPath 3.1 engine), for GİB's UBL-TR rules (assets/ubl-tr, unmodified;
 * see its README and gib-rules.ts), by the ISO Schematron semantics the rules are written for:
 * - `sch:include href="file#id"` puts the element with that id of the file in place of the include;
 * - an abstract rule (`abstract="true"`) is never run on its own: `sch:extends rule="X"` runs X's `let`s and
 *   asserts in the extending rule's context;
 * - in a pattern each node (element or attribute) is checked by the first rule whose context matches it;
 * - `let`s of the schema and of patterns (GİB's code lists are `let`s of the `codes` pattern) are global, as the
 *   ISO skeleton compiles them; a rule's `let`s are evaluated per context node.
 * GİB's Main file also has rules directly under `sch:schema` (currency, unit, country codes and the issue date):
 * they run here as one more pattern, which is stricter than a processor that skips them.
 * node-schematron (the pure-JS processor on the same engine) was not used: it supports neither abstract rules with
 * `sch:extends` nor fragment includes, and it never visits attribute contexts (`//@currencyID`, `//@unitCode`).
 */
type Variables = Record<string, unknown>;
interface Options {
  namespaceResolver?: (prefix: string) => string | null;
}
/**
 * The part of fontoxpath used here, typed locally: its own typings pull in TypeScript's DOM library
 * (`/// <reference lib="dom" />`), which would change the global `Headers` the server code is checked against.
 */
interface FontoXPath {
  evaluateXPath: ((expr: string, node: Node, dom: null, vars: Variables, type: number, o?: Options) => unknown[]) & {
    ALL_RESULTS_TYPE: number;
  };
  evaluateXPathToBoolean(expr: string, node: Node, dom: null, vars: Variables, o?: Options): boolean;
  evaluateXPathToNodes<T = Node>(expr: string, node: Node, dom: null, vars: Variables, o?: Options): T[];
  evaluateXPathToString(expr: string, node: Node, dom: null, vars: Variables, o?: Options): string;
}
const { evaluateXPath, evaluateXPathToBoolean, evaluateXPathToNodes, evaluateXPathToString } = createRequire(
  import.meta.url,
)("fontoxpath") as FontoXPath;
const SCH = "http://purl.oclc.org/dsdl/schematron";

export interface SchematronFailure {
  /** The rule's context, e.g. `inv:Invoice/cac:TaxTotal/cac:TaxSubtotal`. */
  context: string;
  test: string;
  message: string;
}

/** A `let` or an assertion's test with the variables its expression names, found once when the schema is compiled. */
interface Expr {
  name: string;
  xpath: string;
  vars: string[];
}

interface Assertion extends Expr {
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

interface Rule {
  context: string;
  /** Where the context's last step names the node: `1 uri local` for an element, `2 uri local` for an attribute. */
  key: string;
  matches: (n: Node) => boolean;
  lets: Expr[];
  asserts: Assertion[];
}

const varsOf = (xpath: string): string[] => [...new Set([...xpath.matchAll(/\$([\w-]+)/g)].map((m) => m[1]!))];
const letOf = (l: Element): Expr => {
  const xpath = l.getAttribute("value")!;
  return { name: l.getAttribute("name")!, xpath, vars: varsOf(xpath) };
};

const children = (e: Element, name: string) => e.children.filter((c) => c.namespaceURI === SCH && c.localName === name);

function load(dir: string, file: string): Document {
  return parseXmlDocument(readFileSync(`${dir}${file}`, "utf8"));
}

/** Replaces every sch:include by the element it points at (recursively, relative to the schema's folder). */
function resolveIncludes(doc: Document, dir: string): void {
  for (const inc of evaluateXPathToNodes<Element>("//*:include[namespace-uri() = $sch]", doc, null, { sch: SCH })) {
    const [file, id] = inc.getAttribute("href")!.split("#") as [string, string | undefined];
    const included = load(dir, file);
    resolveIncludes(included, dir);
    const target =
      id === undefined
        ? included.documentElement!
        : evaluateXPathToNodes<Element>("//*[@id = $id]", included, null, { id })[0]!;
    inc.parentNode!.replaceChild(doc.importNode(target, true), inc);
  }
}

/**
 * A schema compiled once (includes resolved, abstract rules flattened, each rule indexed by the node name its
 * context ends with, each expression's variables found) and run on many documents.
 */
export class Schematron {
  private readonly namespaces = new Map<string, string>();
  private readonly globals: Expr[] = [];
  /** Per pattern: its rules by the key of the node they can match, in the pattern's order. */
  private readonly patterns: Map<string, Rule[]>[] = [];
  /** One resolver for every call: fontoxpath reuses an expression's compilation only within the same static context. */
  private readonly options = { namespaceResolver: (prefix: string) => this.namespaces.get(prefix) ?? null };

  /** Compiles `file` of `dir` (its includes are read from `dir` too). */
  static load(dir: string, file: string): Schematron {
    return new Schematron(load(dir, file), dir);
  }

  private constructor(schema: Document, dir: string) {
    resolveIncludes(schema, dir);
    const root = schema.documentElement!;
    for (const ns of evaluateXPathToNodes<Element>("//*:ns[namespace-uri() = $sch]", schema, null, { sch: SCH }))
      this.namespaces.set(ns.getAttribute("prefix")!, ns.getAttribute("uri")!);
    const abstracts = new Map<string, Element>();
    for (const r of evaluateXPathToNodes<Element>(
      "//*:rule[namespace-uri() = $sch][@abstract = 'true']",
      schema,
      null,
      {
        sch: SCH,
      },
    ))
      abstracts.set(r.getAttribute("id")!, r);
    const rule = (r: Element): Rule => {
      const lets = children(r, "let").map(letOf);
      const asserts = r.children
        .filter((c) => c.namespaceURI === SCH && ["assert", "report"].includes(c.localName))
        .map((a): Assertion => {
          const xpath = a.getAttribute("test")!;
          const isAssert = a.localName === "assert";
          return { name: "", xpath, vars: varsOf(xpath), isAssert, element: a, byValue: false };
        });
      for (const ext of children(r, "extends")) {
        const base = abstracts.get(ext.getAttribute("rule")!);
        if (base === undefined) throw new Error(`abstract rule ${ext.getAttribute("rule")} not found`);
        const flat = rule(base);
        lets.push(...flat.lets);
        asserts.push(...flat.asserts);
      }
      const context = r.getAttribute("context") ?? "";
      const { matches, key } =
        r.getAttribute("abstract") === "true" ? { matches: () => false, key: "" } : this.matcher(context);
      const onAttribute = key.startsWith("2 ") && lets.length === 0;
      for (const a of asserts) a.byValue = onAttribute && !/\.\.|::|position\(|last\(/.test(a.xpath);
      return { context, key, matches, lets, asserts };
    };
    const indexed = (rules: Rule[]) => {
      const byKey = new Map<string, Rule[]>();
      for (const r of rules) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
      return byKey;
    };
    this.globals.push(...children(root, "let").map(letOf));
    const loose = children(root, "rule").filter((r) => r.getAttribute("abstract") !== "true");
    for (const p of children(root, "pattern")) {
      this.globals.push(...children(p, "let").map(letOf));
      const rules = children(p, "rule").filter((r) => r.getAttribute("abstract") !== "true");
      if (rules.length > 0) this.patterns.push(indexed(rules.map(rule)));
    }
    if (loose.length > 0) this.patterns.push(indexed(loose.map(rule)));
  }

  /**
   * A rule context as a match pattern. GİB's are plain name paths (`a:B/c:D`, `//c:D`, `//@x`), matched here from
   * the node up, which is what XSLT does with them; anything else is refused rather than guessed at.
   */
  private matcher(context: string): { matches: (n: Node) => boolean; key: string } {
    if (!/^(\/\/)?@?[\w-]+(:[\w-]+)?(\/@?[\w-]+(:[\w-]+)?)*$/.test(context))
      throw new Error(`unsupported rule context ${context}`);
    const steps = context
      .replace(/^\/\//, "")
      .split("/")
      .map((step) => {
        const attribute = step.startsWith("@");
        const [prefix, local] = step.replace("@", "").includes(":")
          ? (step.replace("@", "").split(":") as [string, string])
          : [null, step.replace("@", "")];
        const uri = prefix === null ? null : this.namespaces.get(prefix);
        if (uri === undefined) throw new Error(`unknown prefix in rule context ${context}`);
        return { attribute, uri, local };
      });
    const last = steps.at(-1)!;
    const key = `${last.attribute ? 2 : 1} ${last.uri ?? ""} ${last.local}`;
    const matches = (n: Node) => {
      let cur: Node | null = n;
      for (let i = steps.length - 1; i >= 0; i--) {
        const s = steps[i]!;
        if (cur === null || cur.nodeType !== (s.attribute ? 2 : 1)) return false;
        const named = cur as unknown as { namespaceURI: string | null; localName: string };
        if (named.namespaceURI !== s.uri || named.localName !== s.local) return false;
        cur = s.attribute ? (cur as unknown as { ownerElement: Node | null }).ownerElement : cur.parentNode;
      }
      return true;
    };
    return { matches, key };
  }

  /** The failed assertions (and fired reports) of `xml`, in document order per pattern; [] when it passes. */
  validate(xml: string, variables: Record<string, unknown>): SchematronFailure[] {
    const doc = parseXmlDocument(xml);
    const options = this.options;
    const vars: Record<string, unknown> = {};
    for (const l of this.globals)
      vars[l.name] = l.name in variables ? variables[l.name] : letValue(l, doc, vars, options);
    const failures: SchematronFailure[] = [];
    const all = nodesOf(doc);
    const byValue = new Map<Assertion, Map<string, boolean>>();
    const holds = (a: Assertion, node: Node, local: Record<string, unknown>): boolean => {
      const run = () => evaluateXPathToBoolean(a.xpath, node, null, pick(a.vars, local), options) === a.isAssert;
      if (!a.byValue) return run();
      const seen = byValue.get(a) ?? new Map<string, boolean>();
      byValue.set(a, seen);
      const value = node.nodeValue ?? "";
      const known = seen.get(value);
      if (known !== undefined) return known;
      const outcome = run();
      seen.set(value, outcome);
      return outcome;
    };
    for (const byKey of this.patterns)
      for (const node of all) {
        // the first rule of the pattern whose context matches the node checks it
        const r = byKey.get(keyOf(node))?.find((x) => x.matches(node));
        if (r === undefined) continue;
        const local = { ...vars };
        for (const l of r.lets) local[l.name] = letValue(l, node, local, options);
        for (const a of r.asserts) {
          if (holds(a, node, local)) continue;
          failures.push({ context: r.context, test: a.xpath, message: message(a.element, node, local, options) });
        }
      }
    return failures;
  }
}

function keyOf(n: Node): string {
  const named = n as unknown as { namespaceURI: string | null; localName: string };
  return `${n.nodeType} ${named.namespaceURI ?? ""} ${named.localName}`;
}

/** Every element and attribute of a document, in document order. */
function nodesOf(doc: Document): Node[] {
  const out: Node[] = [];
  const walk = (e: Element) => {
    out.push(e, ...e.attributes);
    for (const c of e.children) walk(c);
  };
  walk(doc.documentElement!);
  return out;
}

/** Only the variables an expression refers to: fontoxpath converts every variable it is given on every call. */
function pick(names: readonly string[], vars: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of names) if (n in vars) out[n] = vars[n];
  return out;
}

function used(expr: string, vars: Record<string, unknown>): Record<string, unknown> {
  return pick(varsOf(expr), vars);
}

/** A `let`'s value as fontoxpath takes it back: null for the empty sequence, the item itself for one item. */
function letValue(l: Expr, node: Node, vars: Record<string, unknown>, options: object): unknown {
  const items = evaluateXPath(l.xpath, node, null, pick(l.vars, vars), evaluateXPath.ALL_RESULTS_TYPE, options);
  if (items.length > 1) throw new Error(`let ${l.name} is a sequence of ${items.length} items`);
  return items[0] ?? null;
}

function message(a: Element, node: Node, vars: Record<string, unknown>, options: object): string {
  let out = "";
  for (const c of a.childNodes) {
    if (c.nodeType === 3) out += c.nodeValue ?? "";
    else if ((c as Element).localName === "value-of")
      out += evaluateXPathToString(
        (c as Element).getAttribute("select")!,
        node,
        null,
        used((c as Element).getAttribute("select")!, vars),
        options,
      );
    else if ((c as Element).localName === "name")
      out += evaluateXPathToString(`name(${(c as Element).getAttribute("path") ?? ""})`, node, null, vars, options);
  }
  return out.replace(/\s+/g, " ").trim();
}
