// OTA XML reservations against the JSON reservation-events path, side by side in one run on one service process
// (ROLE=all: the API and the worker that applies the bookings). Each request is a NEW booking of its own reference.
// JSON answers 202 once the event is queued; OTA_HotelResNotifRQ answers once the booking is applied (its answer
// carries the hotel's reservation id), so the XML figure is bookings applied per second. The JSON path is given
// twice: accepted per second, and applied per second (its events drained by the same worker).
import pg from "pg";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { setProviderMapping } from "../src/modules/connectivity/index.ts";
import { createTestClient, createTestProperty } from "../test/helpers/auth.ts";
import { resNotif } from "../test/helpers/ota.ts";
import { benchDatabase, load, startService, table, type Result } from "./harness.ts";

/** Waits (at most `BENCH_OTA_DRAIN_SECONDS`, default 120 s) until no event with a reference like `references` is QUEUED; applied per second since `t0`. */
async function applied(pool: pg.Pool, references: string, t0: number): Promise<{ rate: number; line: string }> {
  const counts = async () =>
    (
      await pool.query<{ total: number; queued: number }>(
        "select count(*)::int as total, count(*) filter (where status = 'QUEUED')::int as queued from partner_messages where external_reference like $1",
        [references],
      )
    ).rows[0]!;
  let now = await counts();
  const limit = Number(process.env.BENCH_OTA_DRAIN_SECONDS ?? 120) * 1000;
  while (now.queued > 0 && performance.now() - t0 < limit) {
    await new Promise((r) => setTimeout(r, 100));
    now = await counts();
  }
  const seconds = (performance.now() - t0) / 1000;
  const done = now.total - now.queued;
  return { rate: Math.round(done / seconds), line: `${done} of ${now.total} applied in ${seconds.toFixed(1)} s` };
}

export async function benchOta(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "silent", ROLE: "api" }),
    { logger: pino({ level: "silent" }) },
  );
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  try {
    const property = await createTestProperty(app, { code: "BENCH-OTA", sandbox: true, businessDate: "2027-01-01" });
    const inventory = app.services.inventory;
    const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
    for (let i = 0; i < 20; i++) await inventory.createRoom(property.id, { number: `1${i}`, roomTypeId: dbl.id });
    const bar = await inventory.createRatePlan(property.id, {
      code: "BAR",
      name: "Best",
      boardType: "ROOM_ONLY",
      roomTypeIds: [dbl.id],
    });
    await inventory.setPrices(property.id, {
      ratePlanId: bar.id,
      roomTypeId: dbl.id,
      from: "2027-01-01",
      to: "2027-12-31",
      amountMinor: 25000n,
    });
    for (const [kind, code, externalCode] of [
      ["room_type", "DBL", "B-DBL"],
      ["rate_plan", "BAR", "B-BAR"],
    ] as const)
      await setProviderMapping(pool, { propertyCode: property.code, provider: "bench", kind, code, externalCode });
    // no overbooking (and no staff alert per booking): the bookings measure the queue, not the alerts
    await pool.query("update room_types set room_count = 1000000 where id = $1", [dbl.id]);
    const client = await createTestClient(app, {
      kind: "partner",
      provider: "bench",
      propertyCodes: [property.code],
      scopes: ["reservations.write"],
    });
    await pool.query("update api_clients set rate_limit_per_minute = 100000000 where id = $1", [client.clientId]);
    const auth = { authorization: `Bearer ${client.accessToken}` };
    const service = await startService(database.url, { env: { ROLE: "all" } });
    const base = `http://127.0.0.1:${service.port}/api/v1`;
    const connections = Number(process.env.BENCH_OTA_CONNECTIONS ?? 20);

    const t0 = performance.now();
    const json = await load("JSON reservation-events NEW (accepted)", {
      url: `${base}/properties/${property.code}/reservation-events`,
      method: "POST",
      body: JSON.stringify({
        eventType: "NEW",
        externalReference: "J-[<id>]",
        channel: "Booking.com",
        arrivalDate: "2027-06-01",
        departureDate: "2027-06-03",
        rooms: [{ roomTypeCode: "B-DBL", ratePlanCode: "B-BAR", adults: 2, children: 0, amountMinor: 50000 }],
        totalMinor: 50000,
        currency: "TRY",
        holder: { name: "Bench Guest" },
      }),
      headers: { ...auth, "content-type": "application/json", "idempotency-key": "j-[<id>]" },
      connections,
      idReplacement: true,
    });
    // the XML phase starts on an empty queue: its answers wait for their own bookings only
    const jsonApplied = await applied(pool, "J-%", t0);
    await pool.query(
      "update partner_messages set status = 'REJECTED', error = 'bench: not drained' where status = 'QUEUED'",
    );
    const xml = await load("OTA_HotelResNotifRQ Commit (applied)", {
      url: `${base}/ota/${property.code}/OTA_HotelResNotifRQ`,
      method: "POST",
      body: resNotif({
        status: "Commit",
        echoToken: "o-[<id>]",
        reference: "O-[<id>]",
        from: "2027-06-01",
        to: "2027-06-03",
        rooms: [{ roomType: "B-DBL", ratePlan: "B-BAR", adults: 2, nights: ["250.00", "250.00"] }],
        holder: ["Bench", "Guest"],
      }),
      headers: { ...auth, "content-type": "application/xml" },
      connections,
      idReplacement: true,
    });
    const jsonEndToEnd: Result = { ...json, name: "JSON reservation-events NEW (applied)", rps: jsonApplied.rate };
    table([json, jsonEndToEnd, xml], json);
    console.log(`JSON events: ${jsonApplied.line}`);
    console.log(
      `OTA XML reservations ${xml.rps}/s (each answered once applied) = ${(xml.rps / json.rps).toFixed(2)}x JSON accepted/s, ${(xml.rps / Math.max(jsonApplied.rate, 1)).toFixed(2)}x JSON applied/s (target >= 0.8x)`,
    );
    console.log(service.summary());
    await service.stop();
  } finally {
    await pool.end();
    await app.close();
    await database.stop();
  }
}
