// Partner reads with and without a read replica: Debian's PostgreSQL (scripts/pg-cluster.ts) as the primary and a
// streaming replica of it (pg_basebackup), the service (ROLE=api, answer cache off so every read reaches the
// database) started once with DATABASE_URL only and once with DATABASE_REPLICA_URL too; the same availability read
// (50 room types x 90 days) and the same feed page, 10 connections each. Prints req/s, p50/p99 and the primary's
// share of the work: the statements the primary ran (pg_stat_database.xact_commit) per read in each run.
import pg from "pg";
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { newId } from "../src/lib/ids.ts";
import { startPgCluster, startReplica } from "../scripts/pg-cluster.ts";
import { createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { load, startService, table, type Result } from "./harness.ts";

export async function benchReplica(): Promise<void> {
  const primary = await startPgCluster({ settings: { wal_level: "replica", max_wal_senders: "4" } });
  let replica: Awaited<ReturnType<typeof startReplica>> | undefined;
  const boot = new pg.Client({ connectionString: primary.url() });
  await boot.connect();
  await boot.query("create database hotelops");
  await boot.end();
  const url = primary.url("hotelops");
  const app = await createApp(loadConfig({ DATABASE_URL: url, ROLE: "api", PORT: "0", HOST: "127.0.0.1" }), {
    logger: pino({ level: "silent" }),
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const property = await createTestProperty(app, { code: "BENCH-R", sandbox: true });
    const client = await createTestClient(app, {
      kind: "partner",
      provider: "bench",
      propertyCodes: [property.code],
      scopes: ["availability.read", "reservations.read"],
    });
    await pool.query("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [client.clientId]);
    for (let i = 0; i < 50; i++)
      await pool.query(
        "insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at) values ($1, $2, $3, $3, 2, 20, now())",
        [newId(), property.id, `RT${i}`],
      );
    await app.close();
    replica = await startReplica(primary);
    const auth = { authorization: `Bearer ${client.accessToken}` };
    const commits = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            "select xact_commit::text as n from pg_stat_database where datname = 'hotelops'",
          )
        ).rows[0]!.n,
      );
    const results: Result[] = [];
    const shares: string[] = [];
    for (const [name, env] of [
      ["primary only", {}],
      ["with replica", { DATABASE_REPLICA_URL: replica.url("hotelops") }],
    ] as const) {
      const service = await startService(url, { env: { ROLE: "api", ANSWER_CACHE_BYTES: "0", ...env }, name });
      try {
        const base = `http://127.0.0.1:${service.port}/api/v1/properties/${property.code}`;
        const before = await commits();
        const r = await load(`availability 50x90, ${name}`, {
          url: `${base}/availability?from=2027-01-01&to=2027-04-01`,
          headers: auth,
          connections: 10,
        });
        shares.push(
          `${name}: ${((await commits()) - before) / Math.max(r.requests ?? 1, 1)} primary transactions per availability read`,
        );
        results.push(r);
        results.push(
          await load(`feed page, ${name}`, { url: `${base}/reservations?limit=100`, headers: auth, connections: 10 }),
        );
      } finally {
        await service.stop();
      }
    }
    table(results, results[0]!);
    for (const s of shares) console.log(s);
  } finally {
    await pool.end();
    await app.close().catch(() => undefined);
    replica?.remove();
    primary.remove();
  }
}
