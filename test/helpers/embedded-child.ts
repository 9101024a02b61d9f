// Runs an embedded PostgreSQL in its own Node process, so a test can kill -9 that process
// (usage: node embedded-child.ts <dir> <port>; prints "ready" once the database accepts connections).
import { pino } from "pino";
import { startEmbeddedPostgres } from "../../src/db/embedded.ts";

const [dir, port] = process.argv.slice(2);
if (dir === undefined || port === undefined) throw new Error("usage: embedded-child.ts <dir> <port>");
await startEmbeddedPostgres({ dir, port: Number(port), logger: pino({ level: "silent" }) });
process.stdout.write("ready\n");
setInterval(() => undefined, 60_000);
