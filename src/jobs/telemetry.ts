import { trace, type Link, type Tracer } from "@opentelemetry/api";
import type { Job, PgBoss } from "pg-boss";
import { incomingTraceparent, runWithTraceparent, traceparentOf } from "../lib/log-context.ts";
import { contextFromTraceparent, currentTraceparent, inSpan, SpanKind } from "../observability/tracing.ts";

/** The key under which a job's data carries the W3C trace context of the operation that enqueued it. */
const TRACE_KEY = "traceparent";

export interface JobTelemetry {
  /** Set when tracing is on: jobs carry the trace context and run in a span continuing it. */
  tracer?: Tracer | undefined;
  /** Called when a handler (or a batch) throws. */
  onFailure?: (queue: string) => void;
  /** Called as a handler (or batch) starts; the function it returns, as it ends (however it ends). */
  onRun?: (queue: string) => () => void;
}

type Handler = (jobs: Job<object>[]) => Promise<unknown>;

/**
 * Makes every send/insert of this pg-boss carry the active trace context inside the job's data (`traceparent`),
 * and every worker run its batch in a consumer span continuing it (the first job's trace; the others as links),
 * so a webhook attempt or a partner event's processing links back to the request that caused it. Generic: no
 * queue or handler knows about it. Without a tracer, jobs carry the caller's own `traceparent` (when the request
 * came with one) and the worker's log lines carry its trace id; and failures are counted.
 */
export function instrumentBoss(pgboss: PgBoss, telemetry: JobTelemetry): void {
  const { tracer, onFailure, onRun } = telemetry;
  const boss = pgboss as unknown as Record<"send" | "insert" | "work", (...args: unknown[]) => Promise<unknown>>;
  {
    const send = boss.send.bind(pgboss);
    boss.send = (...args) => {
      if (typeof args[0] === "string") args[1] = withTrace(args[1]);
      else if (typeof args[0] === "object" && args[0] !== null)
        args[0] = { ...args[0], data: withTrace((args[0] as { data?: unknown }).data) };
      return send(...args);
    };
    const insert = boss.insert.bind(pgboss);
    boss.insert = (name, jobs, ...rest) =>
      insert(
        name,
        Array.isArray(jobs) ? jobs.map((j: { data?: unknown }) => ({ ...j, data: withTrace(j.data) })) : jobs,
        ...rest,
      );
  }
  const work = boss.work.bind(pgboss);
  boss.work = (name, ...rest) => {
    const handler = rest[rest.length - 1] as Handler;
    rest[rest.length - 1] = async (jobs: Job<object>[]) => {
      const ended = onRun?.(String(name));
      try {
        // tracing off: the job's lines still carry the trace id of the request that enqueued it
        if (tracer === undefined)
          return await runWithTraceparent(traceparentOf(jobs[0] === undefined ? undefined : traceOf(jobs[0])), () =>
            handler(jobs),
          );
        const [first, ...others] = jobs;
        const links: Link[] = others.flatMap((j) => {
          const span = trace.getSpanContext(contextFromTraceparent(traceOf(j)));
          return span === undefined ? [] : [{ context: span }];
        });
        const parent = contextFromTraceparent(first === undefined ? undefined : traceOf(first));
        return await inSpan(
          tracer,
          `job ${String(name)}`,
          {
            kind: SpanKind.CONSUMER,
            parent,
            attributes: {
              "messaging.system": "pg-boss",
              "messaging.destination.name": String(name),
              "messaging.batch.message_count": jobs.length,
            },
          },
          (span) => {
            if (links.length > 0) span.addLinks(links);
            return handler(jobs);
          },
        );
      } catch (err) {
        onFailure?.(String(name));
        throw err;
      } finally {
        ended?.();
      }
    };
    return work(name, ...rest);
  };
}

/**
 * `data` with the trace context of the work running now (the active span's, or with tracing off the caller's own
 * `traceparent`, for the job's log lines) unless it carries one already. A writer that batches the jobs of many
 * requests into one insert calls it per request, where each request's context is still the active one.
 */
export function withTrace<T>(data: T): T {
  const traceparent = currentTraceparent() ?? incomingTraceparent();
  if (
    traceparent === undefined ||
    (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data))) ||
    (data as Record<string, unknown> | undefined)?.[TRACE_KEY] !== undefined
  )
    return data;
  return { ...(data as object), [TRACE_KEY]: traceparent } as T;
}

function traceOf(job: Job<object>): unknown {
  return (job.data as Record<string, unknown> | null)?.[TRACE_KEY];
}
