import { join } from "node:path";
import { inject } from "vitest";
import { pino } from "pino";
import { createLogger, type Logger } from "../../src/lib/logger.ts";

/**
 * The service's own logger (createLogger: redaction, request and trace ids) at debug level, writing every line
 * of this test process into the run's log directory; the run ends by scanning it for personal data
 * (test/global-setup.ts, `findPersonalData` in personal-data.ts). TEST_LOG_LEVEL changes the level.
 */
export function testLogger(): Logger {
  const dir = inject("TEST_LOG_DIR");
  return createLogger(
    process.env.TEST_LOG_LEVEL ?? "debug",
    pino.destination({ dest: join(dir, `${process.pid}.ndjson`), append: true, sync: false, mkdir: true }),
  );
}
