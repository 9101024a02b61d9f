import { AsyncLocalStorage } from "node:async_hooks";
import { trace } from "@opentelemetry/api";

/**
 * The request (or job) a piece of work belongs to, for log lines written deep inside it (services, repositories):
 * its request id and the W3C `traceparent` it came with, kept whether or not tracing exports spans.
 */
interface Scope {
  requestId?: string;
  /** A valid incoming `traceparent` (see traceparentOf) and its trace id. */
  traceparent?: string;
  traceId?: string;
}

const scope = new AsyncLocalStorage<Scope>();

/** Runs `work` as part of a request: its lines carry `requestId` and, when the caller sent one, its trace id. */
export function runWithRequestId<T>(requestId: string, work: () => T, traceparent?: string): T {
  const store: Scope = { requestId };
  if (traceparent !== undefined) {
    store.traceparent = traceparent;
    store.traceId = traceparent.slice(3, 35);
  }
  return scope.run(store, work);
}

/** Runs `work` (a job) under the trace of the request that enqueued it: its lines carry that trace id. */
export function runWithTraceparent<T>(traceparent: string | undefined, work: () => T): T {
  if (traceparent === undefined) return work();
  return scope.run({ traceparent, traceId: traceparent.slice(3, 35) }, work);
}

/** The incoming `traceparent` of the request being served (validated), if it came with one. */
export function incomingTraceparent(): string | undefined {
  return scope.getStore()?.traceparent;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A W3C trace context `traceparent` header as the recommendation defines it (version 00 exactly, a later version
 * with extra fields allowed; version ff, upper-case hex, an all-zero trace id or parent id are invalid); else undefined.
 * Only the first 55 characters are kept: that is all a version-00 reader may use.
 */
export function traceparentOf(header: unknown): string | undefined {
  if (typeof header !== "string" || header.length > 512) return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (m === null) return undefined;
  const [, version, traceId, parentId, , rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  return m[0].slice(0, 55);
}

/**
 * Fields every log line carries: the request id and, while a span is active, its trace and span ids; with no span
 * (tracing off, or outside a span) the trace id of the caller's `traceparent`.
 */
export function logContext(): Record<string, string> {
  const fields: Record<string, string> = {};
  const request = scope.getStore();
  if (request?.requestId !== undefined) fields.requestId = request.requestId;
  const span = trace.getActiveSpan()?.spanContext();
  if (span !== undefined) {
    fields.traceId = span.traceId;
    fields.spanId = span.spanId;
  } else if (request?.traceId !== undefined) fields.traceId = request.traceId;
  return fields;
}
