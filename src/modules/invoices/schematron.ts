import { readFileSync } from "node:fs";
import { parseXmlDocument, type Document, type Element, type Node } from "slimdom";
import {
  batchOf,
  evaluateXPathToBoolean,
  evaluateXPathToNodes,
  keyOf,
  letValue,
  message,
  nodesOf,
  pick,
  rootedPath,
  ruleOutcomes,
  varsOf,
  type Assertion,
  type Expr,
  type Rule,
} from "./schematron-xpath.ts";

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
const SCH = "http://purl.oclc.org/dsdl/schematron";

export interface SchematronFailure {
  /** The rule's context, e.g. `inv:Invoice/cac:TaxTotal/cac:TaxSubtotal`. */
  context: string;
  test: string;
  message: string;
}

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
  /** The values of the global `let`s that are string literals (GİB's code lists), evaluated once. */
  private readonly constants = new Map<string, unknown>();
  /**
   * The global `let`s that are plain paths from the root (`//apr:ApplicationResponse/...`, `/sh:Standard...`):
   * the node key their first step needs; in a document without such a node they are the empty sequence.
   */
  private readonly rooted = new Map<string, { key: string; anywhere: boolean }>();
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
      return { context, key, matches, lets, asserts, ...batchOf(asserts) };
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
    for (const l of this.globals) {
      if (/^\s*'[^']*'\s*$/.test(l.xpath)) this.constants.set(l.name, letValue(l, schema, {}, this.options));
      const first = rootedPath(l.xpath);
      const uri = first === undefined ? undefined : this.namespaces.get(first.prefix);
      if (first !== undefined && uri !== undefined)
        this.rooted.set(l.name, { key: `1 ${uri} ${first.local}`, anywhere: first.anywhere });
    }
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

  /**
   * The failed assertions (and fired reports) of `xml`, in document order per pattern; [] when it passes.
   * `batched` (the default): each rule's tests run in one fontoxpath call for all its context nodes (a rule with
   * `let`s: per node), and GİB's code lists are the values computed when the schema was compiled; without it, the
   * reference run, one call per `let` and per test on each node. Both give the same failures (schematron.test.ts).
   */
  validate(xml: string, variables: Record<string, unknown>, batched = true): SchematronFailure[] {
    const doc = parseXmlDocument(xml);
    const options = this.options;
    const all = nodesOf(doc);
    const keys = all.map(keyOf);
    const present = new Set(keys);
    const absent = (name: string) => {
      const r = this.rooted.get(name);
      return r !== undefined && (r.anywhere ? !present.has(r.key) : keys[0] !== r.key);
    };
    const vars: Record<string, unknown> = {};
    for (const l of this.globals)
      vars[l.name] =
        l.name in variables
          ? variables[l.name]
          : !batched
            ? letValue(l, doc, vars, options)
            : this.constants.has(l.name)
              ? this.constants.get(l.name)
              : absent(l.name)
                ? null
                : letValue(l, doc, vars, options);
    const failures: SchematronFailure[] = [];
    for (const byKey of this.patterns) {
      // the first rule of the pattern whose context matches the node checks it
      const checks: { node: Node; rule: Rule }[] = [];
      all.forEach((node, i) => {
        const rule = byKey.get(keys[i]!)?.find((x) => x.matches(node));
        if (rule !== undefined) checks.push({ node, rule });
      });
      const outcome = batched ? batchedOutcomes(checks, vars, options) : referenceOutcomes(checks, vars, options);
      for (const [i, { node, rule }] of checks.entries()) {
        const { holds, local } = outcome[i]!;
        rule.asserts.forEach((a, j) => {
          if (!holds[j])
            failures.push({ context: rule.context, test: a.xpath, message: message(a.element, node, local, options) });
        });
      }
    }
    return failures;
  }
}

type Vars = Record<string, unknown>;
interface Outcome {
  holds: boolean[];
  /** The variables of the node's check (the rule's `let`s on it): an assertion's message may name them. */
  local: Vars;
}

function withLets(rule: Rule, node: Node, vars: Vars, options: object): Vars {
  if (rule.lets.length === 0) return vars;
  const local = { ...vars };
  for (const l of rule.lets) local[l.name] = letValue(l, node, local, options);
  return local;
}

/**
 * One call per rule for all its nodes (per node for a rule with `let`s); a rule whose tests depend only on an
 * attribute's value runs once per distinct value.
 */
function batchedOutcomes(checks: { node: Node; rule: Rule }[], vars: Vars, options: object): Outcome[] {
  const out: Outcome[] = new Array<Outcome>(checks.length);
  const byRule = new Map<Rule, number[]>();
  checks.forEach(({ rule }, i) => byRule.set(rule, [...(byRule.get(rule) ?? []), i]));
  for (const [rule, at] of byRule) {
    if (rule.lets.length > 0) {
      for (const i of at) {
        const local = withLets(rule, checks[i]!.node, vars, options);
        out[i] = { holds: ruleOutcomes(rule, [checks[i]!.node], local, options)[0]!, local };
      }
      continue;
    }
    const byValue = rule.asserts.every((a) => a.byValue);
    const firstOf = new Map<string, number>();
    const run: Node[] = [];
    const slot = at.map((i) => {
      const node = checks[i]!.node;
      const value = byValue ? (node.nodeValue ?? "") : String(run.length);
      if (!firstOf.has(value)) {
        firstOf.set(value, run.length);
        run.push(node);
      }
      return firstOf.get(value)!;
    });
    const holds = ruleOutcomes(rule, run, vars, options);
    at.forEach((i, k) => (out[i] = { holds: holds[slot[k]!]!, local: vars }));
  }
  return out;
}

/** The reference run: each `let` and each test on each node, an attribute-only test once per distinct value. */
function referenceOutcomes(checks: { node: Node; rule: Rule }[], vars: Vars, options: object): Outcome[] {
  const seen = new Map<Assertion, Map<string, boolean>>();
  return checks.map(({ node, rule }) => {
    const local = withLets(rule, node, vars, options);
    const holds = rule.asserts.map((a) => {
      const run = () => evaluateXPathToBoolean(a.xpath, node, null, pick(a.vars, local), options) === a.isAssert;
      if (!a.byValue) return run();
      const known = seen.get(a) ?? new Map<string, boolean>();
      seen.set(a, known);
      const value = node.nodeValue ?? "";
      if (!known.has(value)) known.set(value, run());
      return known.get(value)!;
    });
    return { holds, local };
  });
}
