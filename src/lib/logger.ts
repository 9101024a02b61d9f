import { trace } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger } from "pino";
import { incomingTraceparent, logContext } from "./log-context.ts";

export type { Logger };

/** Bytes of log lines held before one write(2) to stdout, and the longest a line waits there (ms). */
const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 200;

/**
 * Standard output for the service's log lines: lines are collected and written synchronously in batches of
 * LOG_BUFFER_BYTES (one system call per ~20 access lines instead of one per call), at the latest every
 * LOG_FLUSH_MS, and at once when the process exits for whatever reason (a clean stop, process.exit, an uncaught
 * exception). Only SIGKILL or a native crash can lose the last LOG_FLUSH_MS of lines. (sonic-boom's own
 * `minLength` buffer measures the whole pending text on every line: a tenth of an access line's cost.)
 */
export function stdoutLogDestination(): DestinationStream & { flush(): void } {
  // one per process, like standard output itself (and one timer and exit hook, however many loggers use it)
  stdout ??= bufferedStdout();
  return stdout;
}

let stdout: (DestinationStream & { flush(): void }) | undefined;

function bufferedStdout(): DestinationStream & { flush(): void } {
  const out = pino.destination({ dest: 1, sync: true });
  let lines: string[] = [];
  let pending = 0;
  const flush = (): void => {
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    pending = 0;
    out.write(text);
  };
  setInterval(flush, LOG_FLUSH_MS).unref();
  process.once("exit", flush);
  return {
    write(line: string) {
      lines.push(line);
      pending += line.length;
      if (pending >= LOG_BUFFER_BYTES) flush();
    },
    flush,
  };
}

/** pino's isoTime, made once per millisecond: under load many lines share one. */
function isoTimeOncePerMs(): () => string {
  let last = 0;
  let text = "";
  return () => {
    const now = Date.now();
    if (now !== last) {
      last = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

/**
 * JSON lines (to `destination`, else buffered standard output: stdoutLogDestination); secrets, tokens and personal
 * data are never logged (and redacted if they slip into an object).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: null,
    // the request id and trace id of the work that writes the line (a line's own fields win)
    mixin: logContext,
    timestamp: isoTimeOncePerMs(),
    serializers: { err: errorFields },
    redact: {
      paths: [
        "*.authorization",
        "*.password",
        "*.secret",
        "*.clientSecret",
        "*.refreshToken",
        "*.accessToken",
        "*.code",
        "*.token",
        "err.detail",
        "err.parameters",
        "err.cause.detail",
        "err.cause.parameters",
      ],
      censor: "[redacted]",
    },
  };
  return pino(options, destination ?? stdoutLogDestination());
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * An error in a log line: its type, code (as `errorCode`: `*.code` is redacted, it may be a sign-in code), message,
 * the name of the statement that failed, its stack (not for database errors: the driver's frames say nothing),
 * and its causes. Nothing else: pino's own serializer copies every enumerable property, and node-postgres
 * errors and the objects around them carry connection parameters, SQL text and values, and the backend's
 * cancel key.
 */
function errorFields(e: unknown, depth = 0): Record<string, unknown> {
  if (e === null || typeof e !== "object") return { message: String(e).slice(0, 1000) };
  const err = e as { message?: unknown; code?: unknown; statement?: unknown; stack?: unknown; cause?: unknown };
  const out: Record<string, unknown> = { type: e.constructor?.name ?? "Object" };
  if (typeof err.code === "string" || typeof err.code === "number") out.errorCode = err.code;
  if (typeof err.message === "string") out.message = err.message.slice(0, 1000);
  if (typeof err.statement === "string") out.statement = err.statement;
  const database = typeof err.code === "string" && SQLSTATE.test(err.code);
  if (!database && typeof err.stack === "string") out.stack = err.stack.slice(0, 4000);
  if (depth < 3) {
    if (err.cause !== undefined) out.cause = errorFields(err.cause, depth + 1);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) out.errors = errors.slice(0, 5).map((x) => errorFields(x, depth + 1));
  }
  return out;
}

/** An access line's fields, all made by the service: a validated request id, the RPC's proto name, fixed codes. */
export interface AccessFields {
  requestId: string;
  rpc: string;
  transport: string;
  ms: number;
  code: string;
}

/**
 * The access line of a call (`"msg":"call"`, info level) as pino writes it, to the logger's own destination, with the
 * active span's trace ids (or, with no span, the trace id of the caller's valid `traceparent`: lowercase hex), but without pino's work per line (mixin merge, serializers, redaction, generic JSON of
 * each value), which measured a tenth of a status call's CPU: every field is made by the service and is JSON as it
 * is (request ids match `[A-Za-z0-9._:-]`, names and codes come from the proto and our error table).
 */
export function createAccessLog(logger: Logger): (fields: AccessFields) => void {
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  const time = isoTimeOncePerMs();
  return (f) => {
    if (!logger.isLevelEnabled("info")) return;
    const span = trace.getActiveSpan()?.spanContext();
    const incoming = span === undefined ? incomingTraceparent() : undefined;
    const traced =
      span !== undefined
        ? `,"traceId":"${span.traceId}","spanId":"${span.spanId}"`
        : incoming !== undefined
          ? `,"traceId":"${incoming.slice(3, 35)}"`
          : "";
    destination.write(
      `{"level":30${time()},"requestId":"${f.requestId}"${traced},"rpc":"${f.rpc}","transport":"${f.transport}","ms":${f.ms},"code":"${f.code}","msg":"call"}\n`,
    );
  };
}
