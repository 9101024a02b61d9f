// Mobile API: dashboard and forecast p50/p99 with 50 concurrent staff sessions (one connection each) against a
// bare node:http + pg handler running the same SQL, and login throughput against bare argon2 verifies.
import { writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import argon2 from "argon2";
import pg from "pg";
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { addDays } from "../src/lib/dates.ts";
import { argon2Params, hashSecret } from "../src/modules/auth/index.ts";
import { dashboardSql, forecastSql } from "../src/modules/reports/reports.repository.ts";
import { DEMO_PASSWORD, seedDemo } from "../src/ops/seed.ts";
import { benchDatabase, load, startService, table, type Measured } from "./harness.ts";

const SESSIONS = 50;

export async function benchMobile(): Promise<void> {
  const database = await benchDatabase();
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    LOG_LEVEL: "silent",
    ROLE: "api",
    RATE_LIMIT_STAFF_PER_MINUTE: "1000000000",
    RATE_LIMIT_AUTH_PER_MINUTE: "1000000000",
  };
  // this in-process app seeds the data and opens the sessions; the load goes to the service process below
  const app = await createApp(loadConfig(env), { logger: pino({ level: "silent" }) });
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  const servers: http.Server[] = [];
  let service: Measured | undefined;
  try {
    // the demo hotel (30 rooms in 4 types) with about 60 % of the next 60 nights booked
    await seedDemo(app.deps, app.services.admin);
    const {
      rows: [ist],
    } = await pool.query<{ id: string; businessDate: string }>(
      "select id, to_char(business_date, 'YYYY-MM-DD') as \"businessDate\" from properties where code = 'DEMO-IST'",
    );
    const { rows: plans } = await pool.query<{ roomTypeId: string; ratePlanId: string }>(
      'select rt.id as "roomTypeId", rp.id as "ratePlanId" from room_types rt join rate_plans rp on rp.property_id = rt.property_id where rt.property_id = $1 order by rt.code, rp.code',
      [ist!.id],
    );
    const reservations = app.services.reservations;
    let booked = 0;
    for (let i = 0; i < 700; i++) {
      const plan = plans[i % plans.length]!;
      const arrival = addDays(ist!.businessDate, (i * 7) % 60);
      try {
        await reservations.create(
          { propertyId: ist!.id, canOverridePrice: false },
          {
            source: "DIRECT",
            channel: null,
            externalReference: null,
            holderName: `Guest ${i}`,
            arrivalDate: arrival,
            departureDate: addDays(arrival, 1 + (i % 3)),
            rooms: [{ ...plan, adults: 1 }],
          },
        );
        booked++;
      } catch {
        // sold out that night: the next one goes elsewhere
      }
    }
    const {
      rows: [manager],
    } = await pool.query<{ id: string }>("select id from users where email = 'manager@demo.test'");
    const sessions = app.services.auth.sessions;
    const tokens: string[] = [];
    for (let i = 0; i < SESSIONS; i++)
      tokens.push(
        (await sessions.openStaffSession({ userId: manager!.id, propertyId: ist!.id, deviceId: `bench-${i}` }))
          .accessToken,
      );
    process.env.BENCH_SESSION_TOKENS = join(database.dir, "tokens.json");
    writeFileSync(process.env.BENCH_SESSION_TOKENS, JSON.stringify(tokens));
    const setupClient = new URL("./session-client.cjs", import.meta.url).pathname;
    console.log(`${booked} reservations in DEMO-IST, ${SESSIONS} staff sessions`);

    const [year, month] = addDays(ist!.businessDate, 20).split("-").map(Number) as [number, number];
    const from = `${year}-${String(month).padStart(2, "0")}-01`;
    const to = month === 12 ? `${year + 1}-01-01` : `${year}-${String(month + 1).padStart(2, "0")}-01`;
    const bare = async (name: string, respond: () => Promise<unknown>): Promise<string> => {
      const server = http.createServer((_req, res) => {
        respond().then(
          (body) => {
            const text = JSON.stringify(body);
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
            res.end(text);
          },
          () => {
            res.writeHead(500);
            res.end();
          },
        );
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return `http://127.0.0.1:${(server.address() as { port: number }).port}/${name}`;
    };
    const bareDashboard = await bare("dashboard", async () => (await pool.query(dashboardSql, [ist!.id])).rows[0]);
    const statuses = ["GUARANTEED", "IN_HOUSE", "CHECKED_OUT"];
    const bareForecast = await bare("forecast", async () => ({
      days: (await pool.query(forecastSql, [ist!.id, from, to, statuses])).rows,
    }));
    const { PORT: _port, HOST: _host, LOG_LEVEL: _level, DATABASE_URL: _url, ...serviceEnv } = env;
    service = await startService(database.url, { env: serviceEnv });
    const api = `http://127.0.0.1:${service.port}/api/mobile/v1`;
    const opts = { connections: SESSIONS, setupClient };
    const dashBase = await load("bare pg: dashboard SQL (baseline)", { url: bareDashboard, connections: SESSIONS });
    const dash = await load(`GET /dashboard, ${SESSIONS} sessions`, { url: `${api}/dashboard`, ...opts });
    table([dashBase, dash], dashBase);
    const foreBase = await load("bare pg: forecast SQL (baseline)", { url: bareForecast, connections: SESSIONS });
    const fore = await load(`GET /forecast, ${SESSIONS} sessions`, {
      url: `${api}/forecast?year=${year}&month=${month}`,
      ...opts,
    });
    table([foreBase, fore], foreBase);

    // login: argon2id verify dominates; the baseline is bare verifies at the same concurrency in this process
    const hash = await hashSecret(DEMO_PASSWORD);
    const seconds = Math.min(5, Number(process.env.BENCH_SECONDS ?? 8));
    let verifies = 0;
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < until) {
          await argon2.verify(hash, DEMO_PASSWORD);
          verifies++;
        }
      }),
    );
    const login = await load("POST /auth/login", {
      url: `${api}/auth/login`,
      method: "POST",
      connections: 10,
      seconds,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        hotelCode: "DEMO-IST",
        email: "manager@demo.test",
        password: DEMO_PASSWORD,
        deviceId: "bench",
        deviceName: "bench",
      }),
    });
    const verifyRate = Math.round(verifies / seconds);
    console.log(
      `\nlogin (argon2id m=${argon2Params.memoryCost} KiB, t=${argon2Params.timeCost}, p=${argon2Params.parallelism}): ${login.rps}/s, p50 ${login.p50} ms, p99 ${login.p99} ms, errors ${login.errors}; bare argon2 verifies ${verifyRate}/s (x${(login.rps / verifyRate).toFixed(2)})`,
    );
    console.log(service.summary());
  } finally {
    await service?.stop();
    for (const s of servers) s.close();
    await pool.end();
    await app.close();
    await database.stop();
  }
}
