import { context, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import pg from "pg";

type QueryFn = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The pool's connection class when tracing is on (pg-pool's `Client` option): a subclass of node-postgres's Client
 * that gives each statement run inside a traced operation a span (statements outside one, such as pg-boss's
 * polling, stay untraced). Every statement of the process runs on the one pool (pg-boss's too, and the
 * migrations), so this sees them all; node-postgres itself is left as it is. Only the statement text is recorded,
 * never its parameters (they carry guest data).
 */
export class TracedClient extends pg.Client {}

const query = pg.Client.prototype.query as unknown as QueryFn;

(TracedClient.prototype as unknown as { query: QueryFn }).query = function tracedQuery(
  this: unknown,
  ...args: unknown[]
): unknown {
  const parent = context.active();
  const first = args[0] as string | { text?: string; submit?: unknown } | undefined;
  // No traced caller, or a cursor/stream (a Submittable returned as it is): nothing to add.
  if (
    trace.getSpan(parent) === undefined ||
    (typeof first === "object" && first !== null && typeof first.submit === "function")
  )
    return query.apply(this, args);
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
    return query.apply(this, args);
  }
  const result = query.apply(this, args) as Promise<unknown> | undefined;
  if (result !== undefined && typeof result.then === "function") result.then(() => end(undefined), end);
  else end(undefined);
  return result;
};
