import { pino, type DestinationStream, type Logger } from "pino";
import { logContext } from "./log-context.ts";

export type { Logger };

/** JSON lines; secrets, tokens and personal data are never logged (and redacted if they slip into an object). */
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
  // stdout by default, written asynchronously: while one write is under way the next lines gather and leave in one
  // write, so a busy process makes a few writes a second instead of one per line (a line per call is a syscall per
  // request otherwise). pino flushes what is pending when the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
