import { readdirSync, readFileSync } from "node:fs";
import ts from "typescript";
import type { DescService } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { policyOf } from "../../src/modules/platform/policy.rpc.ts";

// A keyed write (an RPC whose outcome the idempotency store keeps) commits its changes with its stored outcome only
// if the transaction it opens is given the call's handle: `keyedOf(ctx)` in the handler, then
// `transact(work, keyed)` (or `transact(work, actor.keyed)`) where the service opens it. A transaction opened without
// it commits at once, and a crash before the outcome is recorded leaves the change without its outcome (the retry
// would run it twice). These checks read the contract's descriptors and the source, so a new keyed RPC or a new
// transaction is held to them without editing this file.

const src = new URL("../../src/", import.meta.url);

/** Every RPC whose outcome is stored (policyOf: state_changing or idempotency_key_required, never sensitive). */
async function keyedRpcs(): Promise<{ rpc: string; localName: string }[]> {
  const root = new URL("../../gen/hotelops/", import.meta.url);
  const found: { rpc: string; localName: string }[] = [];
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith("_pb.js")) continue;
    const mod = (await import(new URL(file, root).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (typeof value !== "object" || value === null || (value as { kind?: unknown }).kind !== "service") continue;
      for (const m of (value as DescService).methods)
        if (policyOf(m).write) found.push({ rpc: policyOf(m).rpc, localName: m.localName });
    }
  }
  return found;
}

function sources(under: string, suffix: string): ts.SourceFile[] {
  return readdirSync(new URL(under, src), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(suffix) && !f.endsWith(".test.ts"))
    .map((f) => {
      const url = new URL(`${under}${f}`, src);
      return ts.createSourceFile(url.pathname, readFileSync(url, "utf8"), ts.ScriptTarget.Latest, true);
    });
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

type Fn = ts.FunctionLikeDeclaration & { body: ts.Node };
const isFn = (n: ts.Node): n is Fn =>
  (ts.isMethodDeclaration(n) || ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)) &&
  n.body !== undefined;

/** The handler of `name` in an RPC implementation object: a method or a property holding a function. */
function handlersNamed(file: ts.SourceFile, name: string): Fn[] {
  const found: Fn[] = [];
  walk(file, (n) => {
    if (!ts.isObjectLiteralExpression(n)) return;
    for (const p of n.properties) {
      if (p.name === undefined || !ts.isIdentifier(p.name) || p.name.text !== name) continue;
      if (isFn(p)) found.push(p);
      else if (ts.isPropertyAssignment(p) && isFn(p.initializer)) found.push(p.initializer);
    }
  });
  return found;
}

/** Names of functions declared in the file whose body reads the call's handle (an actor builder, for instance). */
function handleReaders(file: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const reads = (body: ts.Node) => /\bkeyedOf\(|\bkeyedKey\b/.test(body.getText());
  let grew = true;
  while (grew) {
    grew = false;
    walk(file, (n) => {
      let name: string | undefined;
      let body: ts.Node | undefined;
      if (ts.isFunctionDeclaration(n) && n.name && n.body) [name, body] = [n.name.text, n.body];
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && isFn(n.initializer))
        [name, body] = [n.name.text, n.initializer.body];
      if (name === undefined || body === undefined || names.has(name)) return;
      const text = body.getText();
      if (reads(body) || [...names].some((m) => new RegExp(`\\b${m}\\(`).test(text))) {
        names.add(name);
        grew = true;
      }
    });
  }
  return names;
}

const passesHandle = (handler: Fn, readers: Set<string>): boolean => {
  const text = handler.body.getText();
  return /\bkeyedOf\(/.test(text) || [...readers].some((name) => new RegExp(`\\b${name}\\(`).test(text));
};

/**
 * Keyed RPCs whose change is one statement on the pool, not a transaction (nothing to hold; the outcome is then
 * recorded in a statement of its own, as before the handle existed). Each entry says why.
 */
const noTransaction: Record<string, string> = {
  "hotelops.admin.v1.AdminService/SetPartnerApi": "one update of the platform settings row",
  "hotelops.webhook.v1.WebhookService/DeletePartnerCallback": "one delete statement",
  "hotelops.webhook.v1.WebhookService/TestWebhookEndpoint":
    "its delivery row is one insert; the attempt is recorded by the delivery engine in its own transaction, as every attempt is",
  "hotelops.webhook.v1.WebhookService/MarkNotificationRead": "one update statement",
};

describe("a keyed RPC opens its transaction with the call's handle", () => {
  it("every keyed RPC's handler passes the handle on (keyedOf, or an actor built with it)", async () => {
    const rpcs = await keyedRpcs();
    expect(rpcs.length).toBeGreaterThanOrEqual(60);
    const files = sources("modules/", ".rpc.ts");
    const missing: string[] = [];
    const notFound: string[] = [];
    for (const { rpc, localName } of rpcs) {
      if (rpc in noTransaction) continue;
      const handlers = files.flatMap((f) => handlersNamed(f, localName).map((h) => ({ h, readers: handleReaders(f) })));
      if (handlers.length === 0) notFound.push(rpc);
      for (const { h, readers } of handlers) if (!passesHandle(h, readers)) missing.push(rpc);
    }
    expect(notFound).toEqual([]);
    expect(missing).toEqual([]);
  });

  it("a function given the handle opens every transaction and row write with it", () => {
    const offenders: string[] = [];
    for (const file of [...sources("modules/", ".ts"), ...sources("jobs/", ".ts")]) {
      walk(file, (n) => {
        if (!isFn(n)) return;
        const params = n.parameters.map((p) => p.name.getText());
        const body = n.body.getText();
        // the handle arrives as a parameter, or on the actor or input the function was given
        const handle = params.includes("keyed")
          ? "keyed"
          : params.find((p) => new RegExp(`\\b${p}\\.keyed\\b`).test(body));
        if (handle === undefined) return;
        walk(n.body, (c) => {
          if (!ts.isCallExpression(c)) return;
          const callee = c.expression;
          const name = ts.isIdentifier(callee)
            ? callee.text
            : ts.isPropertyAccessExpression(callee)
              ? callee.name.text
              : "";
          if (name !== "transact") return;
          // transact(work, keyed), transact(work, actor.keyed), transact(work, { ..., keyed }) or options declared so
          const arg = c.arguments[1];
          let options = arg?.getText() ?? "";
          if (arg !== undefined && ts.isIdentifier(arg) && arg.text !== handle)
            walk(n.body, (d) => {
              if (ts.isVariableDeclaration(d) && d.name.getText() === arg.text)
                options = d.initializer?.getText() ?? "";
            });
          if (!/\bkeyed\b/.test(options)) {
            const { line } = file.getLineAndCharacterOfPosition(c.getStart());
            offenders.push(`${file.fileName.split("/src/")[1]}:${line + 1}`);
          }
        });
      });
    }
    expect(offenders).toEqual([]);
  });

  it("the exceptions are still keyed RPCs (a stale entry fails)", async () => {
    const rpcs = new Set((await keyedRpcs()).map((r) => r.rpc));
    expect(Object.keys(noTransaction).filter((rpc) => !rpcs.has(rpc))).toEqual([]);
  });
});
