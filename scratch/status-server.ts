import { pino } from "pino";
import { loadConfig } from "/work/main/src/config.ts";
import { createApp } from "/work/main/src/app.ts";
import { benchDatabase } from "/work/main/bench/harness.ts";
const database = await benchDatabase();
const app = await createApp(loadConfig({ PORT: "18181", HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "silent", ROLE: "api" }), { logger: pino({ level: "silent" }) });
console.log("ready");
setTimeout(async () => { await app.close(); await database.stop(); process.exit(0); }, 16000);
