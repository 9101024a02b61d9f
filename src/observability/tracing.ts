import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";

import type { TracesSampler } from "../config.ts";

export { SpanKind, SpanStatusCode };

export interface Tracing {
  tracer: Tracer;
  /** Exports what is still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

let active: { tracing: Tracing; users: number } | undefined;

/**
 * OpenTelemetry tracing, exported over OTLP/HTTP (JSON) to `endpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`, the
 * exporter appends `/v1/traces`). Without an endpoint nothing is registered: the API stays the no-op one and the
 * call interceptor, jobs and pg skip their span code (free when off), and the SDK is not even loaded (about
 * 15 MiB resident). The provider is process-wide (the OpenTelemetry API holds globals), so apps in one process
 * share it.
 */
export async function startTracing(
  endpoint: string | undefined,
  serviceName: string,
  sampling: { name: TracesSampler; ratio: number } = { name: "parentbased_always_on", ratio: 1 },
): Promise<Tracing | undefined> {
  if (endpoint === undefined) return undefined;
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, resources, sdk] =
    await Promise.all([
      import("@opentelemetry/context-async-hooks"),
      import("@opentelemetry/core"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace"),
    ]);
  const { BatchSpanProcessor, TracerProvider, AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler } = sdk;
  const root = sampling.name.endsWith("traceidratio")
    ? new sdk.TraceIdRatioBasedSampler(sampling.ratio)
    : sampling.name.endsWith("always_off")
      ? new AlwaysOffSampler()
      : new AlwaysOnSampler();
  // parentbased_*: a span with a parent follows the parent's decision (a sampled incoming traceparent is recorded)
  const sampler = sampling.name.startsWith("parentbased_") ? new ParentBasedSampler({ root }) : root;
  const { resourceFromAttributes } = resources;
  if (active !== undefined) {
    active.users++;
    return active.tracing;
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    sampler,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, "")}/v1/traces` }),
        scheduledDelayMillis: 1_000,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    tracer: provider.getTracer("hotelops"),
    async shutdown() {
      if (active === undefined || --active.users > 0) {
        await provider.forceFlush();
        return;
      }
      active = undefined;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
  active = { tracing, users: 1 };
  return tracing;
}

/** True once tracing is on in this process (job and pg instrumentation check this before doing any work). */
export function tracingEnabled(): boolean {
  return active !== undefined;
}

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/** The context of an incoming W3C `traceparent` (and `tracestate`) header, or the current one. */
export function contextFromHeaders(headers: Headers): Context {
  return propagation.extract(context.active(), headers, headerGetter);
}

/** The active span's context as a `traceparent` value (undefined when there is no sampled span). */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` value names (the root context when it is missing or malformed). */
export function contextFromTraceparent(traceparent: unknown): Context {
  if (typeof traceparent !== "string") return context.active();
  return propagation.extract(context.active(), { traceparent });
}

/** Runs `work` in a new active span, ending it (with an error status when `work` throws). */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: { kind?: SpanKind; parent?: Context; attributes?: Record<string, string | number | boolean> },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) },
    options.parent ?? context.active(),
  );
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => work(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : "error" });
    throw err;
  } finally {
    span.end();
  }
}
