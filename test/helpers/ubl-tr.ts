import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { parseXmlDocument, type Document, type Element, type Node } from "slimdom";

/**
 * GİB's UBL-TR schematron rules (test/fixtures/ubl-tr, unmodified; see its README) run on fontoxpath, an XPath 3.1
 * engine, by the ISO Schematron semantics the rules are written for:
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
const dir = fileURLToPath(new URL("../fixtures/ubl-tr/", import.meta.url));

export interface SchematronFailure {
  /** The rule's context, e.g. `inv:Invoice/cac:TaxTotal/cac:TaxSubtotal`. */
  context: string;
  test: string;
  message: string;
}

interface Rule {
  context: string;
  matches: (n: Node) => boolean;
  lets: Element[];
  asserts: Element[];
}

const children = (e: Element, name: string) => e.children.filter((c) => c.namespaceURI === SCH && c.localName === name);

function load(file: string): Document {
  return parseXmlDocument(readFileSync(`${dir}${file}`, "utf8"));
}

/** Replaces every sch:include by the element it points at (recursively, relative to the fixtures folder). */
function resolveIncludes(doc: Document): void {
  for (const inc of evaluateXPathToNodes<Element>("//*:include[namespace-uri() = $sch]", doc, null, { sch: SCH })) {
    const [file, id] = inc.getAttribute("href")!.split("#") as [string, string | undefined];
    const included = load(file);
    resolveIncludes(included);
    const target =
      id === undefined
        ? included.documentElement!
        : evaluateXPathToNodes<Element>("//*[@id = $id]", included, null, { id })[0]!;
    inc.parentNode!.replaceChild(doc.importNode(target, true), inc);
  }
}

class Schematron {
  private readonly namespaces = new Map<string, string>();
  private readonly globals: Element[] = [];
  private readonly patterns: Rule[][] = [];

  constructor(schema: Document) {
    resolveIncludes(schema);
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
      const lets = [...children(r, "let")];
      const asserts = r.children.filter((c) => c.namespaceURI === SCH && ["assert", "report"].includes(c.localName));
      for (const ext of children(r, "extends")) {
        const base = abstracts.get(ext.getAttribute("rule")!);
        if (base === undefined) throw new Error(`abstract rule ${ext.getAttribute("rule")} not found`);
        const flat = rule(base);
        lets.push(...flat.lets);
        asserts.push(...flat.asserts);
      }
      const context = r.getAttribute("context") ?? "";
      return {
        context,
        matches: r.getAttribute("abstract") === "true" ? () => false : this.matcher(context),
        lets,
        asserts,
      };
    };
    this.globals.push(...children(root, "let"));
    const loose = children(root, "rule").filter((r) => r.getAttribute("abstract") !== "true");
    for (const p of children(root, "pattern")) {
      this.globals.push(...children(p, "let"));
      const rules = children(p, "rule").filter((r) => r.getAttribute("abstract") !== "true");
      if (rules.length > 0) this.patterns.push(rules.map(rule));
    }
    if (loose.length > 0) this.patterns.push(loose.map(rule));
  }

  /**
   * A rule context as a match pattern. GİB's are plain name paths (`a:B/c:D`, `//c:D`, `//@x`), matched here from
   * the node up, which is what XSLT does with them; anything else is refused rather than guessed at.
   */
  private matcher(context: string): (n: Node) => boolean {
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
    return (n) => {
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
  }

  validate(xml: string, variables: Record<string, unknown>): SchematronFailure[] {
    const doc = parseXmlDocument(xml);
    const options = { namespaceResolver: (prefix: string) => this.namespaces.get(prefix) ?? null };
    const vars: Record<string, unknown> = {};
    for (const l of this.globals) {
      const name = l.getAttribute("name")!;
      vars[name] = name in variables ? variables[name] : letValue(l, doc, vars, options);
    }
    const failures: SchematronFailure[] = [];
    const all = nodesOf(doc);
    for (const rules of this.patterns) {
      const seen = new Set<Node>();
      for (const r of rules) {
        for (const node of all.filter((n) => r.matches(n))) {
          if (seen.has(node)) continue;
          seen.add(node);
          const local = { ...vars };
          for (const l of r.lets) local[l.getAttribute("name")!] = letValue(l, node, local, options);
          for (const a of r.asserts) {
            const test = a.getAttribute("test")!;
            if (evaluateXPathToBoolean(test, node, null, used(test, local), options) === (a.localName === "assert"))
              continue;
            failures.push({ context: r.context, test, message: message(a, node, local, options) });
          }
        }
      }
    }
    return failures;
  }
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

/** The variables an expression refers to: fontoxpath converts every variable it is given on every call. */
function used(expr: string, vars: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of expr.matchAll(/\$([\w-]+)/g)) if (m[1]! in vars) out[m[1]!] = vars[m[1]!];
  return out;
}

/** A `let`'s value as fontoxpath takes it back: null for the empty sequence, the item itself for one item. */
function letValue(l: Element, node: Node, vars: Record<string, unknown>, options: object): unknown {
  const items = evaluateXPath(l.getAttribute("value")!, node, null, vars, evaluateXPath.ALL_RESULTS_TYPE, options);
  if (items.length > 1) throw new Error(`let ${l.getAttribute("name")} is a sequence of ${items.length} items`);
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

let main: Schematron | undefined;

/**
 * GİB's rules (UBL-TR_Main_Schematron.xml) on an unsigned invoice; [] when it passes. The rules read `$type` to tell
 * e-Fatura from e-Arşiv: an `EARSIVFATURA` document is checked as `earchive`, every other as `efatura`. Rules on the
 * envelope and the XAdES signature have nothing to check in an unsigned, unenveloped invoice (the integrator signs).
 */
export function validateUblTr(xml: string): SchematronFailure[] {
  main ??= new Schematron(load("UBL-TR_Main_Schematron.xml"));
  const earchive = xml.includes("<cbc:ProfileID>EARSIVFATURA</cbc:ProfileID>");
  return main.validate(xml, { type: earchive ? "earchive" : "efatura" });
}
