import { AsyncLocalStorage } from "node:async_hooks";
import { trace } from "@opentelemetry/api";

/** The request a piece of work belongs to, for log lines written deep inside it (services, repositories). */
const scope = new AsyncLocalStorage<{ requestId: string }>();

export function runWithRequestId<T>(requestId: string, work: () => T): T {
  return scope.run({ requestId }, work);
}

/** Fields every log line carries: the request id and, while a span is active, its trace and span ids. */
export function logContext(): Record<string, string> {
  const fields: Record<string, string> = {};
  const request = scope.getStore();
  if (request !== undefined) fields.requestId = request.requestId;
  const span = trace.getActiveSpan()?.spanContext();
  if (span !== undefined) {
    fields.traceId = span.traceId;
    fields.spanId = span.spanId;
  }
  return fields;
}
