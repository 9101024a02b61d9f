import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { stdoutLogDestination, type Logger } from "../lib/logger.ts";
import { describeSeed, type DemoSeed } from "./seed.ts";

/** Where a production start writes the demo credentials it created, readable by the operator only (0600). */
const DEMO_CREDENTIALS_FILE = "demo-credentials.txt";

/**
 * What the start command prints. In development: plain text for a person, the demo passwords and the internal
 * client's secret included (the docs' examples use them). With NODE_ENV=production: JSON lines like every other
 * line of the process, and no secret: the credentials of a demo seed go to `$DATA_DIR/demo-credentials.txt`
 * (mode 0600) and the line names that file. The banner's lines are written whatever LOG_LEVEL says.
 */
export interface Banner {
  apiStarted(base: string): void;
  workerStarted(): void;
  seeded(seed: DemoSeed): void;
}

export function createBanner(config: Pick<Config, "nodeEnv" | "role" | "databaseUrl" | "dataDir">): Banner {
  const database = config.databaseUrl ? "DATABASE_URL" : `embedded PostgreSQL in ${config.dataDir}/pg`;
  if (config.nodeEnv !== "production")
    return {
      apiStarted(base) {
        console.log(`\nHotel Operations Service is up (ROLE=${config.role}, ${database})`);
        console.log(`  REST, Connect, gRPC-Web and gRPC on one port: ${base}`);
        console.log(`  Status:       ${base}/api/v1/status`);
        console.log(`  Mobile API:   ${base}/api/mobile/v1`);
        console.log(`  Partner API:  ${base}/api/v1`);
        console.log(`  Panel:        ${base}/panel   (Integrations: sign in as the manager below)`);
        console.log(`  API docs:     ${base}/docs  (OpenAPI: ${base}/openapi.json)`);
        console.log(`  Health:       ${base}/healthz  ${base}/readyz\n`);
      },
      workerStarted() {
        console.log(`Worker started (ROLE=worker)`);
      },
      seeded(seed) {
        console.log(`${describeSeed(seed)}\n`);
      },
    };

  const line = (msg: string, fields: Record<string, unknown>): void => {
    const out = stdoutLogDestination();
    out.write(`${JSON.stringify({ level: 30, time: new Date().toISOString(), ...fields, msg })}\n`);
    out.flush();
  };
  return {
    apiStarted(base) {
      line("Hotel Operations Service is up", { role: config.role, database, url: base });
    },
    workerStarted() {
      line("Worker started (ROLE=worker)", { role: config.role, database });
    },
    seeded(seed) {
      const fields: Record<string, unknown> = {
        created: seed.created,
        groupCode: seed.groupCode,
        properties: seed.properties.map((p) => p.code),
        users: seed.users.map((u) => u.email),
      };
      if (seed.client !== undefined) {
        fields.clientId = seed.client.clientId;
        fields.credentialsFile = writeCredentials(config.dataDir, seed);
      }
      line(seed.created ? "demo data seeded" : "demo data present", fields);
    },
  };
}

/** The seed's text (passwords, the client's secret) in a file only its owner can read; an older one is replaced. */
function writeCredentials(dataDir: string, seed: DemoSeed): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, DEMO_CREDENTIALS_FILE);
  rmSync(file, { force: true });
  // "wx": created here with mode 0600 (never an existing file or a link planted in its place)
  writeFileSync(file, `${describeSeed(seed)}\n`, { mode: 0o600, flag: "wx" });
  return file;
}

/**
 * A start that cannot go on (bad configuration, migrations): the message as it is on standard error, or with
 * NODE_ENV=production one JSON line (fatal) on standard output like the process's other lines.
 */
export function startFailure(nodeEnv: string | undefined, message: string): void {
  if (nodeEnv !== "production") {
    console.error(message);
    return;
  }
  const out = stdoutLogDestination();
  out.write(`${JSON.stringify({ level: 60, time: new Date().toISOString(), msg: message })}\n`);
  out.flush();
}

/**
 * In production an uncaught exception or unhandled rejection is one JSON line (fatal, with the error's type,
 * message and stack) instead of Node's plain-text trace, and the process exits 1 as Node would.
 */
export function logCrashes(logger: Logger): void {
  const crash = (kind: string) => (err: unknown) => {
    try {
      logger.fatal({ err }, kind);
      stdoutLogDestination().flush();
    } finally {
      process.exit(1);
    }
  };
  process.on("uncaughtException", crash("uncaught exception"));
  process.on("unhandledRejection", crash("unhandled rejection"));
}
