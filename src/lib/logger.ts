import { pino, type Logger } from "pino";

export type { Logger };

/** JSON lines; secrets, tokens and personal data are never logged (and redacted if they slip into an object). */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ["*.authorization", "*.password", "*.secret", "*.clientSecret", "*.refreshToken", "*.accessToken", "*.code", "*.token"],
      censor: "[redacted]",
    },
  });
}
