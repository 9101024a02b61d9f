import { pino, type DestinationStream, type Logger } from "pino";
import { logContext } from "./log-context.ts";

export type { Logger };

/** Bytes of log lines held before one write(2) to stdout, and the longest a line waits there (ms). */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 200;

/**
 * Standard output for the service's log lines: written synchronously, but in batches of LOG_BUFFER_BYTES (one
 * system call per ~20 access lines instead of one per call), at the latest every LOG_FLUSH_MS, and flushed
 * synchronously when the process exits for whatever reason (a clean stop, process.exit, an uncaught exception).
 * Only SIGKILL or a native crash can lose the last LOG_FLUSH_MS of lines.
 */
export function stdoutLogDestination(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: true, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
  process.once("exit", () => out.flushSync());
  return out;
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
    timestamp: pino.stdTimeFunctions.isoTime,
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
