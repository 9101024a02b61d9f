// Connectivity API: a feed page of 500 and reservation events accepted per second, each against a bare
// node:http + pg handler running the same SQL in the same run; 366-day availability (bytes, p50/p99) per
// Accept-Encoding against its identity answer, cached and (a second service) not cached; then ARI (ari.bench.ts).
import http from "node:http";
import zlib from "node:zlib";
import pg from "pg";
import { request } from "undici";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { newId } from "../src/lib/ids.ts";
import { queues } from "../src/jobs/queues.ts";
import { createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { benchDatabase, load, startService, table, type Result } from "./harness.ts";
import { benchAri } from "./ari.bench.ts";

/**
 * Starts a ROLE=worker app, waits (at most 20 s) until no event of one load phase (`external_reference like
 * references`) is QUEUED, stops it. Counts the phase's rows at the end: requests in flight when the load generator
 * stopped still commit afterwards, so a count taken at the start is short by those. Every processed event must have
 * been applied once (`attempts` = 1). "<n> of <total> in <s> s = <rate>/s".
 */
async function processQueued(url: string, pool: pg.Pool, references: string): Promise<string> {
  const counts = async () =>
    (
      await pool.query<{ total: number; queued: number; repeated: number }>(
        "select count(*)::int as total, count(*) filter (where status = 'QUEUED')::int as queued, count(*) filter (where attempts > 1)::int as repeated from partner_messages where external_reference like $1",
        [references],
      )
    ).rows[0]!;
  const before = await counts();
  const worker = await createApp(loadConfig({ DATABASE_URL: url, LOG_LEVEL: "silent", ROLE: "worker" }), {
    logger: pino({ level: "silent" }),
  });
  const started = performance.now();
  let now = before;
  while (now.queued > 0 && performance.now() - started < 20_000) {
    await new Promise((r) => setTimeout(r, 200));
    now = await counts();
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  const after = await counts();
  const processed = after.total - after.queued;
  const late = after.total - before.total;
  const once = after.repeated === 0 ? "each applied once" : `MISMATCH: ${after.repeated} applied more than once`;
  return `${processed} of ${after.total} in ${seconds.toFixed(1)} s = ${Math.round(processed / seconds)}/s (${late} committed after the load generator stopped; ${once})`;
}

/**
 * The 366-day availability of 50 room types (1.5 MB of JSON) per Accept-Encoding, 10 connections each: the bytes
 * on the wire and p50/p99, with the identity answer as the baseline of the same run. Every coding must decode to
 * the identity answer's exact bytes.
 */
async function benchAvailability(url: string, auth: Record<string, string>, databaseUrl: string): Promise<void> {
  const wire = async (coding: string, from = url) => {
    const res = await request(from, { headers: { ...auth, "accept-encoding": coding } });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new Error(`availability answered ${res.statusCode}`);
    const encoding = (res.headers["content-encoding"] as string | undefined) ?? "identity";
    if (encoding !== coding) throw new Error(`asked for ${coding}, got ${encoding}`);
    return { bytes: bytes.length, text: decode[coding]!(bytes).toString("utf8") };
  };
  const plain = await wire("identity");
  const results: Result[] = [];
  const sizes: string[] = [];
  for (const coding of ["identity", "gzip", "br", "zstd"]) {
    const answer = await wire(coding);
    if (answer.text !== plain.text) throw new Error(`${coding} does not decode to the identity answer`);
    sizes.push(`${coding} ${answer.bytes} bytes (${((100 * answer.bytes) / plain.bytes).toFixed(1)}%)`);
    results.push(
      await load(`availability 50x366, ${coding}`, {
        url,
        headers: { ...auth, "accept-encoding": coding },
        connections: 10,
      }),
    );
  }
  // The same reads from a service without the answer cache (docs/contributors/architecture.md, "Cached answers"): the cost of a read
  // after a write changed the answer (SQL, days, JSON, compression each time), as a ratio in this run.
  let memory: string | undefined;
  const uncached = await startService(databaseUrl, {
    env: { ROLE: "api", ANSWER_CACHE_BYTES: "0" },
    name: "service without the answer cache",
  });
  try {
    const other = url.replace(/:\d+\//, `:${uncached.port}/`);
    // a fresh process: warm it up (JIT, pool connections) as the cached service was by the phases before
    for (let i = 0; i < 30; i++) await Promise.all(["identity", "zstd", "identity"].map((c) => wire(c, other)));
    for (const coding of ["identity", "zstd"]) {
      if ((await wire(coding, other)).text !== plain.text)
        throw new Error(`${coding} without the cache does not decode to the identity answer`);
      results.push(
        await load(`availability 50x366, ${coding}, not cached`, {
          url: other,
          headers: { ...auth, "accept-encoding": coding },
          connections: 10,
        }),
      );
    }
    // its peaks are held to the same targets as the cached service's (printed with the table below)
    memory = uncached.summary();
  } finally {
    await uncached.stop();
  }
  table(results, results[0]!);
  if (memory !== undefined) console.log(memory);
  console.log(`availability 50x366 bytes: ${sizes.join(", ")}`);
  const best = results.slice(1, 4).reduce((a, b) => (b.p50 < a.p50 ? b : a));
  console.log(
    `availability 50x366: identity p50 ${results[0]!.p50} ms; compressed p50 ${results
      .slice(1, 4)
      .map((r) => `${r.name.split(", ")[1]} ${r.p50} ms`)
      .join(
        ", ",
      )} (target <= 40 ms; best ${best.p50} ms); not cached: identity p50 ${results[4]!.p50} ms, zstd ${results[5]!.p50} ms`,
  );
}

const decode: Record<string, (b: Buffer) => Buffer> = {
  identity: (b) => b,
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  zstd: (b) => zlib.zstdDecompressSync(b),
};

export async function benchConnectivity(): Promise<void> {
  const database = await benchDatabase();
  // The API process alone (ROLE=api), as deployed next to separate workers: acceptance is measured without the
  // event processing competing for the same event loop; processing is measured afterwards by a ROLE=worker app.
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "silent", ROLE: "api" }),
    { logger: pino({ level: "silent" }) },
  );
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  try {
    const property = await createTestProperty(app, { code: "BENCH-1", sandbox: true });
    const client = await createTestClient(app, {
      kind: "partner",
      provider: "bench",
      propertyCodes: [property.code],
      scopes: ["availability.read", "reservations.read", "reservations.write"],
    });
    const auth = { authorization: `Bearer ${client.accessToken}` };
    // measure the API, not the per-client rate limit
    await pool.query("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [client.clientId]);
    // 50 room types, 600 reservations with change sequence numbers
    for (let i = 0; i < 50; i++) {
      await pool.query(
        "insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at) values ($1, $2, $3, $3, 2, 20, now())",
        [newId(), property.id, `RT${i}`],
      );
    }
    for (let i = 1; i <= 600; i++) {
      await pool.query(
        `insert into reservations (id, property_id, code, status, source, channel, external_reference, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at, change_seq)
         values ($1, $2, $3, 'GUARANTEED', 'CHANNEL', 'bench', $3, 'x', '2027-01-01', '2027-01-03', 2, 0, 1000, 'TRY', now(), now(), $4)`,
        [newId(), property.id, `B${i}`, i],
      );
    }
    const feedSql =
      "select id, code, status, source, external_reference, channel, arrival_date, departure_date, adults, children, cancelled_at, created_at, updated_at from reservations where property_id = $1 and change_seq > 0 order by change_seq limit 501";
    const bare = http.createServer((_req, res) => {
      pool.query(feedSql, [property.id]).then((r) => {
        const body = JSON.stringify({ data: r.rows.slice(0, 500), hasMore: r.rows.length > 500 });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body);
      });
    });
    await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
    const barePort = (bare.address() as { port: number }).port;
    // the in-process app above sets the data up; the load goes to the service process (ROLE=api)
    const service = await startService(database.url, { env: { ROLE: "api" } });
    const base = `http://127.0.0.1:${service.port}/api/v1/properties/${property.code}`;
    const feedBase = await load("bare pg: feed page of 500 (baseline)", {
      url: `http://127.0.0.1:${barePort}/`,
      connections: 10,
    });
    const feed = await load("GET reservations?limit=500", {
      url: `${base}/reservations?limit=500`,
      headers: auth,
      connections: 10,
    });
    table([feedBase, feed], feedBase);
    await benchAvailability(`${base}/availability?from=2027-01-01&to=2028-01-02`, auth, database.url);
    const event = JSON.stringify({ eventType: "CANCELLED", externalReference: "X-1" });
    const accepted = await load("POST reservation-events (accepted)", {
      url: `${base}/reservation-events`,
      method: "POST",
      body: event,
      headers: { ...auth, "content-type": "application/json", "idempotency-key": "bench-[<id>]" },
      connections: 20,
      idReplacement: true,
    });
    const bareInsert = http.createServer((_req, res) => {
      pool
        .query(
          "insert into partner_messages (id, property_id, client_id, provider, event_type, external_reference, payload) values ($1, $2, 'bench', 'bench', 'CANCELLED', 'X-1', '{}')",
          [newId(), property.id],
        )
        .then(() => {
          res.writeHead(202);
          res.end("{}");
        });
    });
    await new Promise<void>((r) => bareInsert.listen(0, "127.0.0.1", r));
    const insertBase = await load("bare pg insert (baseline)", {
      url: `http://127.0.0.1:${(bareInsert.address() as { port: number }).port}/`,
      method: "POST",
      connections: 20,
    });
    table([insertBase, accepted], insertBase);
    // the baseline's rows have no jobs: leave only the accepted events for the worker
    await pool.query("delete from partner_messages where client_id = 'bench'");
    console.log(`events accepted ${accepted.rps}/s (target >= 500/s)`);
    const one = await processQueued(database.url, pool, "X-1");
    console.log(
      `events processed by one ROLE=worker process, all of one booking (serialized per reference by design): ${one}`,
    );
    // what the 20 s did not drain is set aside, so the next phase measures its own events only
    await pool.query(
      "update partner_messages set status = 'REJECTED', error = 'bench: not drained' where status = 'QUEUED'",
    );
    await pool.query("delete from pgboss.job where name = $1 and state < 'active'", [queues.partnerMessages]);
    // The same number of events again, now each of its own booking: no key waits for another.
    const distinct = await load("POST reservation-events (distinct bookings)", {
      url: `${base}/reservation-events`,
      method: "POST",
      body: JSON.stringify({ eventType: "CANCELLED", externalReference: "D-[<id>]" }),
      headers: { ...auth, "content-type": "application/json", "idempotency-key": "distinct-[<id>]" },
      connections: 20,
      idReplacement: true,
    });
    console.log(`events accepted with distinct booking references ${distinct.rps}/s`);
    console.log(
      `events processed by one ROLE=worker process, each of its own booking: ${await processQueued(database.url, pool, "D-%")}`,
    );
    await benchAri({ ...app, port: service.port! }, pool, property);
    console.log(service.summary());
    await service.stop();
    bare.close();
    bareInsert.close();
  } finally {
    await pool.end();
    await app.close();
    await database.stop();
  }
}
