// ARI for channel managers (part of `npm run bench -- connectivity`): the ARI read of 50 room types x 5 rate plans x
// 366 days in the service (target p50 < 50 ms) and over REST (answer size and time), and ARI delta feed page walks
// while restrictions are edited concurrently (pages/s, page p50, and a check that no change was missed or repeated),
// and a partner's ARI write of 100 days x 5 rate plans over REST (target p50 < 100 ms).
import type pg from "pg";
import type { App } from "../src/app.ts";
import { stayInRoom } from "../src/modules/reservations/index.ts";
import { createInventoryService } from "../src/modules/inventory/index.ts";
import { createTestClient } from "../test/helpers/auth.ts";
import { load } from "./harness.ts";

async function latencies(runs: number, work: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 5; i++) await work();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(runs / 2)]!, p99: ms[Math.min(runs - 1, Math.floor(runs * 0.99))]! };
}

/** Needs the property's 50 room types (RT0..RT49) already in place. */
export async function benchAri(
  app: App & { port: number },
  pool: pg.Pool,
  property: { id: string; code: string },
): Promise<void> {
  const inventory = createInventoryService({
    transact: app.deps.transact,
    pool: app.db.pool,
    clock: app.clock,
    stayInRoom,
  });
  const roomTypes = (
    await pool.query<{ id: string }>("select id from room_types where property_id = $1 order by code", [property.id])
  ).rows.map((r) => r.id);
  const plans: string[] = [];
  for (let i = 0; i < 5; i++) {
    const rp = await inventory.createRatePlan(property.id, {
      code: `RP${i}`,
      name: `Plan ${i}`,
      boardType: "ROOM_ONLY",
      roomTypeIds: roomTypes,
    });
    plans.push(rp.id);
  }
  // a price every day for every pair (91,500 rows) and restrictions on about a third of the days
  await pool.query(
    `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select $1, rp, rt, d::date, 10000 + (extract(doy from d)::int * 7) % 5000
       from unnest($2::uuid[]) rp cross join unnest($3::uuid[]) rt cross join generate_series('2027-01-01'::date, '2028-01-01'::date, interval '1 day') d`,
    [property.id, plans, roomTypes],
  );
  await pool.query(
    `insert into rate_restrictions (property_id, rate_plan_id, room_type_id, date, min_stay, closed_to_arrival, stop_sell)
     select $1, rp, rt, d::date, 2, extract(isodow from d) = 5, extract(doy from d)::int % 17 = 0
       from unnest($2::uuid[]) rp cross join unnest($3::uuid[]) rt cross join generate_series('2027-01-01'::date, '2028-01-01'::date, interval '3 days') d`,
    [property.id, plans, roomTypes],
  );
  await pool.query("analyze daily_prices; analyze rate_restrictions");
  const client = await createTestClient(app, {
    kind: "partner",
    provider: "bench",
    propertyCodes: [property.code],
    scopes: ["ari.read"],
  });
  await pool.query("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [client.clientId]);
  const auth = { authorization: `Bearer ${client.accessToken}` };
  const base = `http://127.0.0.1:${app.port}/api/v1/properties/${property.code}`;

  const service = await latencies(30, () => inventory.getAri(property.id, { from: "2027-01-01", to: "2028-01-02" }));
  console.log(
    `ARI read 50 room types x 5 rate plans x 366 days, service getAri: p50 ${service.p50.toFixed(1)} ms, p99 ${service.p99.toFixed(1)} ms (target p50 < 50 ms: ${service.p50 < 50 ? "met" : "MISSED"})`,
  );
  const url = `${base}/ari?from=2027-01-01&to=2028-01-02`;
  const t = performance.now();
  const res = await fetch(url, { headers: auth });
  const body = await res.arrayBuffer();
  const bytes = body.byteLength;
  // the whole grid in one page (at most 100,000 cells a page)
  const grid = JSON.parse(Buffer.from(body).toString()) as {
    roomTypes: { ratePlans: { days: unknown[] }[] }[];
    hasMore: boolean;
  };
  const cells = grid.roomTypes.reduce((n, rt) => n + rt.ratePlans.reduce((m, rp) => m + rp.days.length, 0), 0);
  if (cells !== 91_500 || grid.hasMore) throw new Error(`ARI read: ${cells} cells, hasMore ${grid.hasMore}`);
  const rest = await latencies(10, async () => (await fetch(url, { headers: auth })).arrayBuffer());
  console.log(
    `ARI read over REST: ${res.status}, ${(bytes / 1024 / 1024).toFixed(1)} MiB of JSON (first answer ${(performance.now() - t).toFixed(0)} ms), one at a time p50 ${rest.p50.toFixed(0)} ms, p99 ${rest.p99.toFixed(0)} ms`,
  );
  const loaded = await load("GET ari 50 x 5 x 366 (2 connections)", { url, headers: auth, connections: 2 });
  console.log(
    `ARI read under load, 2 connections: ${loaded.rps} req/s, p50 ${loaded.p50} ms, p99 ${loaded.p99} ms, ${loaded.cpuUs} us CPU/req, errors ${loaded.errors}`,
  );

  await benchAriWrite(app, pool, property, base);

  // Delta feed: 4 writers set restrictions in a loop while one reader walks pages of 100 behind them.
  const start = (await (
    await fetch(`${base}/ari/changes?updatedSince=2099-01-01T00:00:00.000Z`, { headers: auth })
  ).json()) as { nextCursor: string };
  let writing = true;
  let edits = 0;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; writing; i++) {
      await inventory.setRestrictions(property.id, {
        ratePlanIds: [plans[w]!],
        roomTypeIds: [roomTypes[i % 50]!],
        from: "2027-03-01",
        to: "2027-04-01",
        weekdays: [],
        minStay: 1 + (i % 3),
      });
      edits++;
    }
  });
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const pageMs: number[] = [];
  let seen = 0;
  let cursor = start.nextCursor;
  const until = performance.now() + seconds * 1000;
  for (let stopping = false; ;) {
    if (!stopping && performance.now() > until) {
      writing = false;
      await Promise.all(writers);
      stopping = true;
    }
    const t0 = performance.now();
    const page = (await (await fetch(`${base}/ari/changes?limit=100&cursor=${cursor}`, { headers: auth })).json()) as {
      data: unknown[];
      nextCursor: string;
      hasMore: boolean;
    };
    pageMs.push(performance.now() - t0);
    seen += page.data.length;
    cursor = page.nextCursor;
    if (stopping && !page.hasMore) break;
  }
  pageMs.sort((a, b) => a - b);
  const committed = (
    await pool.query<{ n: number }>("select count(*)::int as n from ari_changes where property_id = $1 and seq > $2", [
      property.id,
      Buffer.from(start.nextCursor, "base64url").toString().slice(3),
    ])
  ).rows[0]!.n;
  console.log(
    `ARI delta feed under ${edits} concurrent restriction edits (${(edits / seconds).toFixed(0)}/s by 4 writers): ${pageMs.length} pages of <= 100 in ${seconds} s+, page p50 ${pageMs[Math.floor(pageMs.length / 2)]!.toFixed(1)} ms, p99 ${pageMs[Math.floor(pageMs.length * 0.99)]!.toFixed(1)} ms; changes seen ${seen} of ${committed} committed (${seen === committed ? "none missed or repeated" : "MISMATCH"})`,
  );
}

/**
 * A partner's ARI write over REST: 500 changes (100 days x 5 rate plans of one room type, one day each, a price and
 * a minimum stay), prices different on every call so every call writes. Target p50 < 100 ms.
 */
async function benchAriWrite(
  app: App & { port: number },
  pool: pg.Pool,
  property: { id: string; code: string },
  base: string,
): Promise<void> {
  const writer = await createTestClient(app, {
    kind: "partner",
    provider: "bench",
    propertyCodes: [property.code],
    scopes: ["ari.write"],
    approved: true,
  });
  await pool.query("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [writer.clientId]);
  const headers = { authorization: `Bearer ${writer.accessToken}`, "content-type": "application/json" };
  let round = 0;
  const body = () => {
    round++;
    const changes = [];
    for (let p = 0; p < 5; p++)
      for (let d = 0; d < 100; d++) {
        const from = new Date(Date.UTC(2027, 5, 1 + d)).toISOString().slice(0, 10);
        const to = new Date(Date.UTC(2027, 5, 2 + d)).toISOString().slice(0, 10);
        changes.push({
          roomTypeCode: "RT7",
          ratePlanCode: `RP${p}`,
          from,
          to,
          priceMinor: 10000 + round * 10 + p,
          minStay: 1 + (round % 3),
        });
      }
    return JSON.stringify({ changes });
  };
  let status = 0;
  const write = await latencies(30, async () => {
    const res = await fetch(`${base}/ari`, { method: "POST", headers, body: body() });
    status = res.status;
    await res.arrayBuffer();
  });
  console.log(
    `ARI write over REST, 100 days x 5 rate plans (500 changes, one call): ${status}, p50 ${write.p50.toFixed(1)} ms, p99 ${write.p99.toFixed(1)} ms (target p50 < 100 ms: ${write.p50 < 100 ? "met" : "MISSED"})`,
  );
}
