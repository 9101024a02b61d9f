import { createRequire } from "node:module";
import { context, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import pg from "pg";

type QueryFn = (this: unknown, ...args: unknown[]) => unknown;
const patched = new WeakSet<object>();

/**
 * A span per database statement run inside a traced operation (statements outside one, such as pg-boss's
 * polling, stay untraced). Patches `Client.prototype.query` of node-postgres, once per copy: ours (pg-boss and the
 * plain pool use it) and the one MikroORM resolves, which may be another copy. Only the statement text is recorded,
 * never its parameters (they carry guest data).
 */
export function instrumentPg(): void {
  const copies = [pg];
  try {
    const ormPg = createRequire(import.meta.resolve("@mikro-orm/postgresql"))("pg") as typeof pg;
    if (ormPg !== pg) copies.push(ormPg);
  } catch {
    // MikroORM resolves our copy: nothing more to patch
  }
  for (const copy of copies) patch(copy.Client.prototype as unknown as { query: QueryFn });
}

function patch(proto: { query: QueryFn }): void {
  if (patched.has(proto)) return;
  patched.add(proto);
  const original = proto.query;
  proto.query = function tracedQuery(this: unknown, ...args: unknown[]): unknown {
    const parent = context.active();
    const first = args[0] as string | { text?: string; submit?: unknown } | undefined;
    // No traced caller, or a cursor/stream (a Submittable returned as it is): nothing to add.
    if (
      trace.getSpan(parent) === undefined ||
      (typeof first === "object" && first !== null && typeof first.submit === "function")
    )
      return original.apply(this, args);
    const text = typeof first === "string" ? first : (first?.text ?? "");
    const operation = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase() ?? "query";
    const span = trace.getTracer("hotelops.pg").startSpan(
      `pg ${operation}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": "postgresql",
          "db.operation.name": operation,
          "db.query.text": text.slice(0, 2_000),
        },
      },
      parent,
    );
    const end = (err: unknown): void => {
      if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? "error" });
      span.end();
    };
    const last = args[args.length - 1];
    if (typeof last === "function") {
      args[args.length - 1] = function (this: unknown, err: unknown, ...rest: unknown[]) {
        end(err);
        return (last as QueryFn).call(this, err, ...rest);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args) as Promise<unknown> | undefined;
    if (result !== undefined && typeof result.then === "function") result.then(() => end(undefined), end);
    else end(undefined);
    return result;
  };
}
