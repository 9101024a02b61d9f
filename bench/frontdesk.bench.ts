// The front desk at hotel scale, through the service code on one embedded PostgreSQL:
// - the night audit of a 500-room hotel with 500 stays in house (created and checked in through the service):
//   target under 10 s, every stay charged its night;
// - inventory:verify of a 200-room hotel holding a year of stays (written in bulk, day rows computed from them):
//   target under 5 s, no drift found; then ten corrupted day rows found and repaired.
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { addDays } from "../src/lib/dates.ts";
import { verifyInventory } from "../src/ops/inventory-verify.ts";
import { benchDatabase } from "./harness.ts";

const businessDate = "2027-01-10";

export async function benchFrontDesk(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  try {
    const audit = await nightAuditOf500(app);
    const verify = await verifyYearOf200Rooms(app);
    console.log("measure                                        value   target   ");
    for (const [name, ms, target, note] of [
      ["night audit, 500 rooms, 500 stays in house", audit.ms, 10_000, `${audit.charged} nights charged`],
      ["inventory:verify, 200 rooms, a year of stays", verify.ms, 5_000, `${verify.nights} room nights, drift 0`],
      ["inventory:verify --repair, 10 rows drifted", verify.repairMs, 5_000, `${verify.repaired} counters repaired`],
    ] as const)
      console.log(
        `${name.padEnd(46)} ${`${Math.round(ms)} ms`.padStart(8)}  < ${target / 1000} s  ${ms < target ? "" : "MISSED "}${note}`,
      );
  } finally {
    await app.close();
    await database.stop();
  }
}

type App = Awaited<ReturnType<typeof createApp>>;

export async function hotel(app: App, code: string, types: number, roomsPerType: number) {
  const p = await app.services.admin.createProperty({
    groupCode: "BENCH",
    code,
    name: code,
    timeZone: "Europe/Istanbul",
    currency: "TRY",
    amountScale: 100,
    businessDate,
    emailVerification: false,
    sandbox: false,
  });
  const inv = app.services.inventory;
  const typeIds: string[] = [];
  const roomIds: string[] = [];
  for (let t = 0; t < types; t++) {
    const rt = await inv.createRoomType(p.id, { code: `T${t}`, name: `Type ${t}`, maxOccupancy: 2 });
    typeIds.push(rt.id);
    for (let r = 0; r < roomsPerType; r++)
      roomIds.push(
        (await inv.createRoom(p.id, { number: `${t + 1}${String(r).padStart(3, "0")}`, roomTypeId: rt.id })).id,
      );
  }
  const bar = await inv.createRatePlan(p.id, {
    code: "BAR",
    name: "Bar",
    boardType: "ROOM_ONLY",
    roomTypeIds: typeIds,
  });
  for (const roomTypeId of typeIds)
    await inv.setPrices(p.id, {
      ratePlanId: bar.id,
      roomTypeId,
      from: addDays(businessDate, -360),
      to: addDays(businessDate, 360),
      amountMinor: 250_000n,
    });
  return { p, typeIds, roomIds, ratePlanId: bar.id, roomsPerType };
}

/** 500 rooms, 500 two-night stays arriving today, all checked in; then one night audit. */
async function nightAuditOf500(app: App): Promise<{ ms: number; charged: number }> {
  let t = performance.now();
  const h = await hotel(app, "AUDIT-500", 5, 100);
  console.log(`  500-room hotel set up in ${Math.round(performance.now() - t)} ms`);
  t = performance.now();
  const actor = { propertyId: h.p.id, canOverridePrice: false };
  const work = h.roomIds.map((roomId, i) => async () => {
    const r = await app.services.reservations.create(actor, {
      source: "API",
      channel: null,
      externalReference: null,
      holderName: `Guest ${i}`,
      arrivalDate: businessDate,
      departureDate: addDays(businessDate, 2),
      rooms: [{ roomTypeId: h.typeIds[Math.floor(i / h.roomsPerType)]!, ratePlanId: h.ratePlanId, adults: 2 }],
    });
    await app.services.reservations.checkIn(actor, r.reservation.id, r.reservation.rooms[0]!.id, roomId);
  });
  for (let i = 0; i < work.length; i += 10) await Promise.all(work.slice(i, i + 10).map((w) => w()));
  console.log(`  500 stays booked and checked in in ${Math.round(performance.now() - t)} ms`);
  const started = performance.now();
  const result = await app.services.nightAudit.run(h.p.id, "bench", { expectedBusinessDate: businessDate });
  const ms = performance.now() - started;
  const charged = result.summary.roomChargesPosted;
  if (charged !== 500) throw new Error(`the audit charged ${charged} nights, not 500`);
  return { ms, charged };
}

/**
 * 200 rooms (10 types of 20), a year of stays written in bulk: per room, back-to-back stays of 1-4 nights over 365
 * days from 300 days back, the past ones checked out, today's in house, later ones guaranteed, every tenth cancelled
 * before arrival; the day rows computed from the stays that hold nights. Then verify (no drift), corrupt ten day
 * rows, and repair.
 */
async function verifyYearOf200Rooms(
  app: App,
): Promise<{ ms: number; nights: number; repairMs: number; repaired: number }> {
  let t = performance.now();
  const h = await hotel(app, "VERIFY-200", 10, 20);
  console.log(`  200-room hotel set up in ${Math.round(performance.now() - t)} ms`);
  t = performance.now();
  const start = addDays(businessDate, -300);
  await app.db.query(
    `with rooms as (select r.id as room_id, r.room_type_id, row_number() over (order by r.number) as k
                      from rooms r where r.property_id = $1),
          stays as (
            select rm.room_type_id, rm.k, s.n, $2::date + s.offset_days as arrival, $2::date + s.offset_days + s.nights as departure
              from rooms rm
             cross join lateral (
               select n, nights, (sum(nights) over (order by n) - nights)::int as offset_days
                 from (select n, 1 + ((n * 7 + rm.k::int) % 4) as nights from generate_series(1, 180) n) x) s
             where s.offset_days < 365),
          rows as (
            select gen_random_uuid() as id, room_type_id, arrival, departure, k, n,
                   case when n % 10 = 0 and arrival > $3::date then 'CANCELLED'
                        when departure <= $3::date then 'CHECKED_OUT'
                        when arrival <= $3::date then 'IN_HOUSE' else 'GUARANTEED' end as status
              from stays),
          res as (
            insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children,
                                      total_minor, currency, cancelled_at, created_at, updated_at, change_seq)
            select id, $1, 'V' || k || '-' || n, status, 'DIRECT', 'Guest', arrival, departure, 2, 0, 0, 'TRY',
                   case when status = 'CANCELLED' then now() end, now(), now(), -(row_number() over ())
              from rows returning id)
     insert into reservation_rooms (id, property_id, reservation_id, position, room_type_id, rate_plan_id, adults, children, nightly_minor, total_minor, arrival_date)
     select gen_random_uuid(), $1, id, 0, room_type_id, $4, 2, 0, array_fill(0::bigint, array[departure - arrival]), 0, arrival from rows`,
    [h.p.id, start, businessDate, h.ratePlanId],
  );
  // fresh statistics for the bulk-written tables (a live database has them; without, the day rows' join below is
  // planned as a nested loop over every stay and runs for minutes)
  await app.db.query("analyze reservations, reservation_rooms");
  const [held] = await app.db.query<{ nights: number }>(
    `with n as (select rr.room_type_id, g::date as date
                  from reservations r join reservation_rooms rr on rr.property_id = r.property_id and rr.reservation_id = r.id
                 cross join generate_series(r.arrival_date, r.departure_date - 1, interval '1 day') g
                 where r.property_id = $1 and r.status <> 'CANCELLED'),
          d as (insert into room_type_days as d (property_id, room_type_id, date, total, sold)
                select $1, room_type_id, date, 20, count(*) from n group by room_type_id, date
                on conflict (property_id, room_type_id, date) do update set sold = excluded.sold returning 1)
     select (select count(*) from n)::int as nights`,
    [h.p.id],
  );
  console.log(`  a year of ${held!.nights} room nights written in ${Math.round(performance.now() - t)} ms`);
  let started = performance.now();
  const check = await verifyInventory(app.deps, "VERIFY-200", false);
  const ms = performance.now() - started;
  if (check.drift.length > 0)
    throw new Error(`verify found drift in consistent data: ${JSON.stringify(check.drift[0])}`);
  await app.db.query(
    `update room_type_days set sold = sold + 1
      where (property_id, room_type_id, date) in (select property_id, room_type_id, date from room_type_days
                                                    where property_id = $1 order by date, room_type_id limit 10)`,
    [h.p.id],
  );
  started = performance.now();
  const repair = await verifyInventory(app.deps, "VERIFY-200", true);
  const repairMs = performance.now() - started;
  if (repair.drift.length < 10)
    throw new Error(`repair found ${repair.drift.length} drifted counters, not at least 10`);
  if ((await verifyInventory(app.deps, "VERIFY-200", false)).drift.length > 0) throw new Error("drift after repair");
  return { ms, nights: held!.nights, repairMs, repaired: repair.drift.length };
}
