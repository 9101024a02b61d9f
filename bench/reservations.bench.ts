// Reservation creates per second with 50 concurrent clients (target >= 300/s, zero overbooking) and the
// availability read of 50 room types x 366 days (target p50 < 15 ms), each against a bare pg baseline of the
// same SQL on a plain pool of the same size.
import pg from "pg";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { newId } from "../src/lib/ids.ts";
import { createInventoryService, readAvailability } from "../src/modules/inventory/index.ts";
import { addDays, daysBetween } from "../src/lib/dates.ts";
import { queues } from "../src/jobs/queues.ts";
import { poolQueryable } from "../src/db/queryable.ts";
import { createReservationService, stayInRoom } from "../src/modules/reservations/index.ts";
import { createLoop, forDuration } from "./creates.ts";
import { benchDatabase } from "./harness.ts";

const clients = 50;
const roomTypes = 50;
const roomsPerType = 40;
const businessDate = "2026-11-22";

export async function benchReservations(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  // the baseline's pool: as the service's (size, pipelining)
  const pool = new pg.Pool({ connectionString: database.url, max: 10, ...({ pipeline: true } as pg.PoolConfig) });
  try {
    const deps = { transact: app.deps.transact, pool: app.deps.db.pool, clock: app.deps.clock };
    const inventory = createInventoryService({ ...deps, stayInRoom });
    const reservations = createReservationService(deps);
    const propertyId = await benchProperty(pool, "BENCH");
    const types: { id: string; ratePlanId: string }[] = [];
    for (let t = 0; t < roomTypes; t++) {
      const rt = await inventory.createRoomType(propertyId, { code: `T${t}`, name: `Type ${t}`, maxOccupancy: 2 });
      await pool.query(
        `insert into rooms (id, property_id, room_type_id, number, status, created_at, updated_at)
         select gen_random_uuid(), $1, $2, $3 || '-' || n, 'CLEAN', now(), now() from generate_series(1, $4) n`,
        [propertyId, rt.id, `T${t}`, roomsPerType],
      );
      await pool.query("update room_types set room_count = $3 where property_id = $1 and id = $2", [
        propertyId,
        rt.id,
        roomsPerType,
      ]);
      const rp = await inventory.createRatePlan(propertyId, {
        code: `RP${t}`,
        name: "Room only",
        boardType: "ROOM_ONLY",
        roomTypeIds: [rt.id],
      });
      await inventory.setPrices(propertyId, {
        ratePlanId: rp.id,
        roomTypeId: rt.id,
        from: businessDate,
        to: addDays(businessDate, 400),
        amountMinor: 100_000n,
      });
      types.push({ id: rt.id, ratePlanId: rp.id });
    }
    const stay = (i: number) => {
      const arrival = addDays(businessDate, i % 360);
      return { type: types[i % roomTypes]!, arrival, departure: addDays(arrival, 1 + (i % 3)) };
    };

    // --- creates through the service (validation, prices, restrictions, inventory, events + jobs, ARI feed, seq) ---
    const outcome = await createLoop(reservations, propertyId, {
      seconds,
      clients,
      holderName: "Bench Guest",
      stay: (i) => {
        const s = stay(i);
        return { roomTypeId: s.type.id, ratePlanId: s.type.ratePlanId, arrival: s.arrival, departure: s.departure };
      },
    });
    const serviceRate = outcome.rate;
    const overbooked = await pool.query(
      "select count(*)::int as n from room_type_days where sold + blocked + out_of_order > total or sold < 0",
    );
    const mismatched = await pool.query(
      `select count(*)::int as n from room_type_days d
        where d.property_id = $1 and d.sold <> (select count(*) from reservation_rooms rr join reservations r on r.id = rr.reservation_id
                                                where rr.room_type_id = d.room_type_id and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE')
                                                  and r.arrival_date <= d.date and r.departure_date > d.date)`,
      [propertyId],
    );

    // --- bare pg baseline: the same writes, written by hand on a plain pool with the same options (pipelining):
    // BEGIN with the guarded take of the nights and the reservation with its room line; the day rows created when
    // missing; then the event row, its fan-out job, the ARI feed entry and the change sequence with COMMIT. What it
    // leaves out is what the service is for: the quote and restriction read and the checks.
    const baseProperty = await benchProperty(pool, "BASE");
    const baseTypes = await copyTypes(pool, propertyId, baseProperty);
    const boss = app.deps.boss.pgboss;
    const bare = { ok: 0, noAvailability: 0 };
    let m = 0;
    const bareRate = await forDuration(seconds, clients, async () => {
      const s = stay(m++);
      const { id: typeId, ratePlanId } = baseTypes.get(s.type.id)!;
      const nights = daysBetween(s.arrival, s.departure);
      const c = await pool.connect();
      const q = (text: string, values: unknown[]) => c.query(text, values);
      try {
        const id = newId();
        const [, takenRows] = await Promise.all([
          q("begin", []),
          q(
            "update room_type_days set sold = sold + 1 where property_id = $1 and room_type_id = $2 and date >= $3 and date < $4 and sold + blocked + out_of_order + 1 <= total returning to_char(date, 'YYYY-MM-DD') as date",
            [baseProperty, typeId, s.arrival, s.departure],
          ),
          q(
            `with r as (insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children, total_minor, currency, created_at, updated_at)
             values ($1, $2, 'R' || nextval('reservation_code_seq'), 'GUARANTEED', 'API', 'Bench Guest', $3, $4, 2, 0, $7, 'TRY', now(), now()) returning id)
             insert into reservation_rooms (id, property_id, reservation_id, position, room_type_id, rate_plan_id, adults, children, nightly_minor, total_minor, arrival_date)
             select $5, $2, r.id, 0, $6, $8, 2, 0, array_fill(100000::bigint, array[$9::int]), $7, $3 from r`,
            [id, baseProperty, s.arrival, s.departure, newId(), typeId, 100_000 * nights, ratePlanId, nights],
          ),
        ]);
        let taken = takenRows.rowCount ?? 0;
        if (taken < nights) {
          const more = await q(
            `insert into room_type_days as d (property_id, room_type_id, date, total, sold)
             select $1, $2, g.day::date, $5, 1 from generate_series($3::date, $4::date - 1, interval '1 day') g(day)
              where not (g.day::date = any($6::date[]))
             on conflict (property_id, room_type_id, date) do update set sold = d.sold + 1 where d.sold + d.blocked + d.out_of_order + 1 <= d.total`,
            [
              baseProperty,
              typeId,
              s.arrival,
              s.departure,
              roomsPerType,
              takenRows.rows.map((r: { date: string }) => r.date),
            ],
          );
          taken += more.rowCount ?? 0;
        }
        if (taken < nights) {
          await q("rollback", []);
          bare.noAvailability++;
          return;
        }
        const now = new Date();
        await Promise.all([
          q(
            "insert into domain_events (id, property_id, type, occurred_at, data, created_at) values ($1, $2, 'reservation.created', $3, $4, clock_timestamp()), ($5, $2, 'availability.changed', $3, $6, clock_timestamp())",
            [newId(), baseProperty, now, JSON.stringify({ id }), newId(), JSON.stringify({ from: s.arrival })],
          ),
          boss.insert(queues.eventsFanout, [{ data: { eventId: id } }, { data: { eventId: id } }], {
            db: { executeSql: (text: string, values: unknown[] = []) => c.query(text, values) },
          }),
          q(
            `with a as (insert into ari_counters as k (property_id, seq) values ($1, 1) on conflict (property_id) do update set seq = k.seq + 1 returning seq),
                  x as (insert into ari_changes (property_id, seq, reason, from_date, to_date, room_types, changed_at) select $1, a.seq, 'reservation', $3, $4, array['T'], now() from a returning 1),
                  c as (insert into property_counters (property_id, change_seq) select $1, 1 from (select count(*) from x) n
                        on conflict (property_id) do update set change_seq = property_counters.change_seq + 1 returning change_seq)
             update reservations r set change_seq = c.change_seq from c where r.property_id = $1 and r.id = $2`,
            [baseProperty, id, s.arrival, s.departure],
          ),
          q("commit", []),
        ]);
        bare.ok++;
      } catch (err) {
        await c.query("rollback");
        throw err;
      } finally {
        c.release();
      }
    });

    // --- availability: 50 room types x 366 days, every day stored ---
    const from = businessDate;
    const to = addDays(from, 366);
    for (const t of types) {
      await pool.query(
        `insert into room_type_days (property_id, room_type_id, date, total) select $1, $2, d::date, $5 from generate_series($3::date, $4::date - 1, interval '1 day') d on conflict do nothing`,
        [propertyId, t.id, from, to, roomsPerType],
      );
    }
    const reads = poolQueryable(pool);
    const servicePoll = await latencies(200, async () => {
      const r = await inventory.getAvailability(propertyId, { from, to });
      if (r.length !== roomTypes || r[0]!.days.length !== 366) throw new Error("wrong availability shape");
    });
    const barePoll = await latencies(200, async () => {
      await readAvailability(reads, propertyId, from, to);
    });
    const sqlOnly = await latencies(200, async () => {
      await pool.query(
        `select rt.id, rt.code, rt.room_count, d.days from room_types rt
           left join (select room_type_id, json_agg(json_build_array(date - $2::date, total, sold, blocked, out_of_order)) as days
                        from room_type_days where property_id = $1 and date >= $2::date and date < $3::date group by room_type_id) d on d.room_type_id = rt.id
          where rt.property_id = $1 order by rt.code`,
        [propertyId, from, to],
      );
    });

    console.log(`\n${"case".padEnd(70)} ${"value".padStart(10)} ${"x base".padStart(8)}`);
    const line = (name: string, value: string, ratio: number) =>
      console.log(`${name.padEnd(70)} ${value.padStart(10)} ${ratio.toFixed(2).padStart(8)}`);
    line("bare pg create transaction (same writes), 50 clients (baseline) /s", bareRate.toFixed(0), 1);
    line(
      "service create (validate, price, restrict, inventory, events, seq) /s",
      serviceRate.toFixed(0),
      serviceRate / bareRate,
    );
    line("bare pg availability SQL p50 ms (baseline)", sqlOnly.p50.toFixed(2), 1);
    line("readAvailability (SQL + expand to days) p50 ms", barePoll.p50.toFixed(2), barePoll.p50 / sqlOnly.p50);
    line(
      "service getAvailability 50 types x 366 days p50 ms",
      servicePoll.p50.toFixed(2),
      servicePoll.p50 / sqlOnly.p50,
    );
    console.log(
      `creates: ${outcome.ok} ok, ${outcome.noAvailability} no_availability, ${outcome.other} other errors (${String(outcome.firstOther ?? "none")}); ` +
        `bare: ${bare.ok} ok, ${bare.noAvailability} no_availability; overbooked days ${(overbooked.rows[0] as { n: number }).n}, ` +
        `days whose sold differs from the reservations ${(mismatched.rows[0] as { n: number }).n} (target 0 and 0); ` +
        `targets: >= 300 creates/s (${serviceRate >= 300 ? "met" : "MISSED"}), availability p50 < 15 ms (${servicePoll.p50 < 15 ? "met" : "MISSED"}); p99 ${servicePoll.p99.toFixed(2)} ms`,
    );
  } finally {
    await pool.end();
    await app.close();
    await database.stop();
  }
}

async function benchProperty(pool: pg.Pool, code: string): Promise<string> {
  const groupId = newId();
  const id = newId();
  await pool.query("insert into hotel_groups (id, code, name) values ($1, $2, 'Bench')", [groupId, `G-${code}`]);
  await pool.query(
    `insert into properties (id, group_id, code, name, time_zone, currency, business_date) values ($1, $2, $3, 'Bench hotel', 'Europe/Istanbul', 'TRY', $4)`,
    [id, groupId, code, businessDate],
  );
  return id;
}

/** The room types of one property in another, each with a rate plan: source room type id -> the copy's ids. */
async function copyTypes(
  pool: pg.Pool,
  fromProperty: string,
  toProperty: string,
): Promise<Map<string, { id: string; ratePlanId: string }>> {
  const { rows } = await pool.query<{ id: string; code: string }>(
    "select id, code from room_types where property_id = $1",
    [fromProperty],
  );
  const map = new Map<string, { id: string; ratePlanId: string }>();
  for (const r of rows) {
    const id = newId();
    const ratePlanId = newId();
    await pool.query(
      "insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at) values ($1, $2, $3, 'x', 2, $4, now())",
      [id, toProperty, r.code, roomsPerType],
    );
    await pool.query(
      "insert into rate_plans (id, property_id, code, name, board_type, created_at) values ($1, $2, $3, 'x', 'ROOM_ONLY', now())",
      [ratePlanId, toProperty, `RP-${r.code}`],
    );
    map.set(r.id, { id, ratePlanId });
  }
  return map;
}

async function latencies(runs: number, work: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 10; i++) await work();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(runs / 2)]!, p99: ms[Math.floor(runs * 0.99)]! };
}
