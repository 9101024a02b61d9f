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
  return destination === undefined ? pino(options) : pino(options, destination);
}
