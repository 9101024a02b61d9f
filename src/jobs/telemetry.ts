import { trace, type Link, type Tracer } from "@opentelemetry/api";
import type { Job, PgBoss } from "pg-boss";
import { contextFromTraceparent, currentTraceparent, inSpan, SpanKind } from "../observability/tracing.ts";

/** The key under which a job's data carries the W3C trace context of the operation that enqueued it. */
export const TRACE_KEY = "traceparent";

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
 * queue or handler knows about it. Without a tracer only failures are counted.
 */
export function instrumentBoss(pgboss: PgBoss, telemetry: JobTelemetry): void {
  const { tracer, onFailure, onRun } = telemetry;
  const boss = pgboss as unknown as Record<"send" | "insert" | "work", (...args: unknown[]) => Promise<unknown>>;
  if (tracer !== undefined) {
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
        if (tracer === undefined) return await handler(jobs);
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

function withTrace(data: unknown): unknown {
  const traceparent = currentTraceparent();
  if (
    traceparent === undefined ||
    (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data)))
  )
    return data;
  return { ...(data as object), [TRACE_KEY]: traceparent };
}

function traceOf(job: Job<object>): unknown {
  return (job.data as Record<string, unknown> | null)?.[TRACE_KEY];
}
