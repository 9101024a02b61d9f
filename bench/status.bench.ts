// GET /api/v1/status through the REST gateway vs. the same RPC over Connect vs. a bare node:http + pg handler
// doing the same database read. Target (issue 3): gateway >= 0.7x the bare handler's throughput, p99 <= 2x.
import http from "node:http";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { pino } from "pino";
import { benchDatabase, load, rssMiB, table } from "./harness.ts";

export async function benchStatus(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  const bare = http.createServer((_req, res) => {
    pool.query("select status, partner_api_enabled from platform_settings where id = 1").then(
      (r) => {
        const row = r.rows[0] as { status: string; partner_api_enabled: boolean };
        const body = JSON.stringify({
          status: row.status,
          apiVersion: "v1",
          partnerApi: row.partner_api_enabled ? "enabled" : "disabled",
        });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
  const barePort = (bare.address() as { port: number }).port;
  try {
    const baseline = await load("bare node:http + pg (baseline)", {
      url: `http://127.0.0.1:${barePort}/api/v1/status`,
    });
    const gateway = await load("REST gateway GET /api/v1/status", {
      url: `http://127.0.0.1:${app.port}/api/v1/status`,
    });
    const connect = await load("Connect POST GetStatus (JSON)", {
      url: `http://127.0.0.1:${app.port}/hotelops.status.v1.StatusService/GetStatus`,
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    table([baseline, gateway, connect], baseline);
    console.log(
      `gateway/bare throughput ${(gateway.rps / baseline.rps).toFixed(2)} (target >= 0.70), p99 ratio ${(gateway.p99 / Math.max(1, baseline.p99)).toFixed(2)} (target <= 2.00); RSS ${rssMiB()} MiB`,
    );
  } finally {
    bare.close();
    await pool.end();
    await app.close();
    await database.stop();
  }
}
