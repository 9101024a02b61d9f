import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freshDatabaseUrl } from "../helpers/db.ts";
import pg from "pg";

let app: TestApp;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  // A database from an older release: the reservation-events queue exists with pg-boss's 15-minute default, no heartbeat.
  const first = await startTestApp({ databaseUrl });
  await first.db.pool.query(
    "update pgboss.queue set expire_seconds = 900, heartbeat_seconds = null where name = 'connectivity.reservation-events'",
  );
  await first.close();
  app = await startTestApp({ databaseUrl });
});
afterAll(async () => {
  await app?.close();
});

describe("job expiry fits the work", () => {
  it("every queue bounds a job (expiry) and watches its worker (heartbeat), older databases included", async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; expire_seconds: number; heartbeat_seconds: number | null }>(
        "select name, expire_seconds, heartbeat_seconds from pgboss.queue order by name",
      );
      expect(rows.map((r) => r.name)).toEqual(
        expect.arrayContaining([
          "connectivity.reservation-events",
          "events.fanout",
          "webhooks.deliver",
          "platform.purge",
        ]),
      );
      // pg-boss's own cron queue (__pgboss__send-it) only moves schedules into our queues.
      const tooLong = rows
        .filter((r) => !r.name.startsWith("__pgboss__") && (r.expire_seconds > 50 || r.heartbeat_seconds !== 10))
        .map((r) => `${r.name}: expiry ${r.expire_seconds} s, heartbeat ${r.heartbeat_seconds} s`);
      expect(tooLong).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
