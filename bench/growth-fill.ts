// The growth bench's data, written in bulk by SQL (generate_series, insert ... select): no API call, so the full
// history takes minutes. Every property has the same shape: 50 room types of 4 rooms, one rate plan, two webhook
// addresses. Per property: 10,000 reservations over three years (with their room lines and, for the stays, folios with
// a room charge per night and the payment), 100,000 availability day rows (50 room types x 2,000 days), 5,000 events,
// 10,000 deliveries with 25,000 attempts over the last 45 days.
// At full scale (200 properties) that is 2 million reservations, 20 million day rows, 1 million events and
// 5 million attempts; BENCH_GROWTH_SCALE scales the number of properties, never a property's history.
import type pg from "pg";

export const roomTypesPerProperty = 50;
export const roomsPerType = 4;
export const reservationsPerProperty = 10_000;
export const eventsPerProperty = 5_000;
export const deliveriesPerProperty = 10_000;
/** How far back the attempt history reaches: the 30-day purge deletes about a third of it. */
export const attemptHistoryDays = 45;
/** Arrivals of the full history: three years back to 90 days ahead (days from the business date). */
export const fullWindow = { from: -1_005, to: 90 } as const;
/** Day rows kept per room type: from three years back, 2,000 days. */
export const fullDays = { from: -1_096, to: 904 } as const;

/** What one fillHistory call writes for each property in scope (days relative to the business date, `to` exclusive). */
export interface HistoryPart {
  /** Arrival dates of the reservations (their count: the property's 10,000 pro rata); events over its past part. */
  arrivals: { from: number; to: number };
  /** Dates of the day rows written (existing rows add the new reservations to `sold`). */
  days: { from: number; to: number };
  /** Deliveries and attempts of the last 45 days (kept apart: the purge keeps that history at 30 days). */
  deliveries: boolean;
}

/** Group, properties `GR0001`..`GRnnnn` and their inventory (room types, rooms, rate plan, webhook addresses). */
export async function fillProperties(pool: pg.Pool, first: number, last: number, businessDate: string): Promise<void> {
  await pool.query(
    "insert into hotel_groups (id, code, name) values (gen_random_uuid(), 'GROWTH', 'Growth bench') on conflict (code) do nothing",
  );
  await pool.query(
    `insert into properties (id, group_id, code, name, time_zone, currency, business_date)
     select gen_random_uuid(), g.id, 'GR' || lpad(n::text, 4, '0'), 'Growth hotel ' || n, 'Europe/Istanbul', 'TRY', $3::date
       from hotel_groups g cross join generate_series($1::int, $2::int) n where g.code = 'GROWTH'`,
    [first, last, businessDate],
  );
  const mine =
    "(select id from properties where code between 'GR' || lpad($1::text, 4, '0') and 'GR' || lpad($2::text, 4, '0'))";
  await pool.query(
    `insert into room_types (id, property_id, code, name, max_occupancy, room_count, created_at)
     select gen_random_uuid(), p.id, 'T' || t, 'Type ' || t, 2, ${roomsPerType}, now() from ${mine} p cross join generate_series(1, ${roomTypesPerProperty}) t`,
    [first, last],
  );
  await pool.query(
    `insert into rooms (id, property_id, room_type_id, number, status, created_at, updated_at)
     select gen_random_uuid(), rt.property_id, rt.id, rt.code || '-' || n, 'CLEAN', now(), now()
       from room_types rt cross join generate_series(1, ${roomsPerType}) n where rt.property_id in ${mine}`,
    [first, last],
  );
  await pool.query(
    `insert into rate_plans (id, property_id, code, name, board_type, created_at)
     select gen_random_uuid(), p.id, 'RO', 'Room only', 'ROOM_ONLY', now() from ${mine} p`,
    [first, last],
  );
  await pool.query(
    `insert into rate_plan_room_types (property_id, rate_plan_id, room_type_id)
     select rp.property_id, rp.id, rt.id from rate_plans rp join room_types rt on rt.property_id = rp.property_id where rp.property_id in ${mine}`,
    [first, last],
  );
  await pool.query(
    `insert into webhook_endpoints (id, property_id, url, event_types, status, secret_sealed, created_at, updated_at)
     select gen_random_uuid(), p.id, 'https://hooks.example.com/' || p.id || '/' || n, '{reservation.created,reservation.updated,reservation.cancelled,availability.changed}', 'open', 'sealed', now(), now()
       from ${mine} p cross join generate_series(1, 2) n`,
    [first, last],
  );
}

/** Prices for the next 400 days of every room type of one property (what a booking is quoted from). */
export async function fillPrices(pool: pg.Pool, propertyId: string, businessDate: string): Promise<void> {
  await pool.query(
    `insert into daily_prices (property_id, rate_plan_id, room_type_id, date, amount_minor)
     select x.property_id, x.rate_plan_id, x.room_type_id, d::date, 250000
       from rate_plan_room_types x cross join generate_series($2::date, $2::date + 399, interval '1 day') d where x.property_id = $1`,
    [propertyId, businessDate],
  );
}

/**
 * Three years of history for properties first..last: reservations and room lines, the day rows (sold counts the
 * reservations that still hold rooms), events, deliveries and attempts; logs the rows and seconds of each step.
 */
export async function fillHistory(
  pool: pg.Pool,
  first: number,
  last: number,
  businessDate: string,
  part: HistoryPart,
  log: (line: string) => void,
): Promise<void> {
  const { arrivals, days } = part;
  const span = (w: { from: number; to: number }) => w.to - w.from;
  const reservations = Math.round((reservationsPerProperty * span(arrivals)) / span(fullWindow));
  const pastDays = Math.min(arrivals.to, 0) - arrivals.from;
  const events = Math.max(0, Math.round((eventsPerProperty * pastDays) / -fullWindow.from));
  const c = await pool.connect();
  const step = async (name: string, sql: string, params: unknown[] = []) => {
    const t = performance.now();
    const r = await c.query(sql, params);
    log(`  ${name}: ${r.rowCount ?? 0} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  try {
    await c.query("set work_mem = '256MB'");
    await step(
      "properties in scope",
      `create temp table gp as
       select p.id, (select rp.id from rate_plans rp where rp.property_id = p.id) as rate_plan,
              (select array_agg(rt.id order by rt.code) from room_types rt where rt.property_id = p.id) as types,
              coalesce((select change_seq from property_counters pc where pc.property_id = p.id), 0) as seq0
         from properties p where p.code between 'GR' || lpad($1::text, 4, '0') and 'GR' || lpad($2::text, 4, '0')`,
      [first, last],
    );
    // One generated row per reservation: arrival over three years up to 90 days ahead, 1-4 nights, a status that
    // fits its dates (history checked out, cancelled or no-show; current in house; future guaranteed or cancelled).
    await step(
      "reservation plan",
      `create temp table gr as
       select gen_random_uuid() as id, gp.id as property_id, gp.rate_plan, gp.types[1 + floor(random() * ${roomTypesPerProperty})::int] as room_type,
              a.arrival, a.arrival + a.nights as departure, a.nights, gp.seq0 + n as seq, n,
              case when a.arrival + a.nights <= $1::date then (case when n % 20 = 0 then 'NO_SHOW' when n % 10 = 1 then 'CANCELLED' else 'CHECKED_OUT' end)
                   when a.arrival < $1::date then 'IN_HOUSE'
                   else (case when n % 10 = 1 then 'CANCELLED' else 'GUARANTEED' end) end as status
         from gp cross join generate_series(1, ${reservations}) n
         cross join lateral (select ($1::date + ${arrivals.from} + floor(random() * ${span(arrivals)})::int) as arrival,
                                    1 + floor(random() * 4)::int as nights, n as k) a`,
      [businessDate],
    );
    await step(
      "reservations",
      `insert into reservations (id, property_id, code, status, source, holder_name, arrival_date, departure_date, adults, children,
                                 total_minor, currency, cancelled_at, created_at, updated_at, change_seq)
       select id, property_id, 'H' || seq, status, case when n % 3 = 0 then 'CHANNEL' else 'DIRECT' end, 'Guest ' || n, arrival, departure, 2, 0,
              250000 * nights, 'TRY', case when status = 'CANCELLED' then arrival - 3 end,
              arrival - 30, arrival - 30 + interval '1 hour', seq
         from gr`,
    );
    await step(
      "reservation rooms",
      `insert into reservation_rooms (id, property_id, reservation_id, position, room_type_id, rate_plan_id, adults, children, nightly_minor, total_minor, checked_in_at, checked_out_at, arrival_date)
       select gen_random_uuid(), property_id, id, 0, room_type, rate_plan, 2, 0, array_fill(250000::bigint, array[nights]), 250000 * nights,
              case when status in ('IN_HOUSE', 'CHECKED_OUT') then arrival + interval '14 hours' end,
              case when status = 'CHECKED_OUT' then departure + interval '11 hours' end, arrival
         from gr`,
    );
    // Folios of the stays, as the night audit and the front desk leave them: a room charge per night stayed (in-house
    // guests up to the night before the business date) and, for a checked-out stay, one payment of its total (balanced);
    // the stored balance is the ledger's sum.
    await step(
      "folios",
      `insert into folios (id, property_id, reservation_id, reservation_code, number, currency, amount_scale, created_at, balance_minor)
       select gen_random_uuid(), property_id, id, 'H' || seq, lpad(seq::text, 6, '0'), 'TRY', 100, arrival + interval '14 hours',
              case when status = 'IN_HOUSE' then 250000 * ($1::date - arrival) else 0 end
         from gr where status in ('CHECKED_OUT', 'IN_HOUSE')`,
      [businessDate],
    );
    await step(
      "folio room charges",
      `insert into folio_charges (id, property_id, folio_id, kind, code, description, amount_minor, business_date, reservation_room_id, posted_at, posted_by)
       select gen_random_uuid(), gr.property_id, f.id, 'ROOM', 'ROOM', 'Room night', 250000, night::date, l.id, night + interval '23 hours', 'night_audit:growth'
         from gr join folios f on f.property_id = gr.property_id and f.reservation_id = gr.id
         join reservation_rooms l on l.property_id = gr.property_id and l.reservation_id = gr.id
        cross join generate_series(gr.arrival, least(gr.departure, $1::date) - 1, interval '1 day') night`,
      [businessDate],
    );
    await step(
      "folio payments",
      `insert into folio_payments (id, property_id, folio_id, amount_minor, method_code, method_kind, business_date, posted_at, posted_by)
       select gen_random_uuid(), gr.property_id, f.id, 250000 * gr.nights, 'VISA', 'CARD', gr.departure, gr.departure + interval '10 hours', 'user:growth'
         from gr join folios f on f.property_id = gr.property_id and f.reservation_id = gr.id where gr.status = 'CHECKED_OUT'`,
    );
    await step(
      "folio counters",
      `insert into folio_counters (property_id, last_number) select id, seq0 + ${reservations} from gp
       on conflict (property_id) do update set last_number = greatest(folio_counters.last_number, excluded.last_number)`,
    );
    await step(
      "change sequence heads",
      `insert into property_counters (property_id, change_seq) select id, seq0 + ${reservations} from gp
       on conflict (property_id) do update set change_seq = excluded.change_seq`,
    );
    // Rows that exist already (the measured hotel's recent days, filled first) are rewritten only where the count
    // changes: a no-op update would leave a dead version of each of them that no real history has.
    await step(
      "availability day rows",
      `insert into room_type_days as d (property_id, room_type_id, date, total, sold)
       select gp.id, t.id, day::date, ${roomsPerType}, least(${roomsPerType}, coalesce(s.n, 0))
         from gp cross join unnest(gp.types) as t(id)
        cross join generate_series($1::date + ${days.from}, $1::date + ${days.to - 1}, interval '1 day') day
         left join (select room_type, night, count(*)::int as n from gr cross join generate_series(arrival, departure - 1, interval '1 day') night
                     where status in ('GUARANTEED', 'IN_HOUSE') group by room_type, night) s on s.room_type = t.id and s.night = day
       on conflict (property_id, room_type_id, date) do update set sold = least(d.total - d.blocked - d.out_of_order, d.sold + excluded.sold)
        where excluded.sold > 0`,
      [businessDate],
    );
    await step(
      "events",
      `insert into domain_events (id, property_id, type, occurred_at, created_at, data)
       select gen_random_uuid(), gp.id, (array['reservation.created', 'reservation.updated', 'reservation.cancelled', 'availability.changed'])[1 + n % 4],
              at, at, jsonb_build_object('id', gen_random_uuid(), 'code', 'H' || n)
         from gp cross join generate_series(1, ${events}) n
        cross join lateral (select $1::date + ${arrivals.from} + random() * ${pastDays} * interval '1 day' + n * interval '0 seconds' as at) a`,
      [businessDate],
    );
    if (part.deliveries) {
      // Deliveries and attempts of the last 45 days, as the engine leaves them: mostly succeeded, some failed after
      // retries, a few pending; 1-4 attempts each (2.5 on average).
      await step(
        "deliveries",
        `create temp table gd as
         select gen_random_uuid() as id, ep.property_id, ep.id as endpoint_id, gen_random_uuid() as event_id,
                (array['reservation.created', 'reservation.updated', 'availability.changed'])[1 + n % 3] as event_type,
                1 + n % 4 as attempts, now() - random() * ${attemptHistoryDays} * interval '1 day' as at,
                case when n % 100 = 0 then 'pending' when n % 25 = 0 then 'failed' else 'succeeded' end as status
           from gp join webhook_endpoints ep on ep.property_id = gp.id
          cross join generate_series(1, ${deliveriesPerProperty / 2}) n`,
      );
      await step(
        "delivery rows",
        `insert into webhook_deliveries (id, property_id, endpoint_id, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at, next_attempt_at, last_http_status, created_at)
         select id, property_id, endpoint_id, event_id, event_type, status, attempts, at, at + (attempts - 1) * interval '1 minute',
                case when status = 'pending' then now() + interval '1 hour' end, case when status = 'succeeded' then 200 else 500 end, at
           from gd`,
      );
      await step(
        "attempts",
        `insert into webhook_attempts (id, property_id, endpoint_id, delivery_id, event_id, event_type, attempt, http_status, duration_ms, started_at, finished_at)
         select gen_random_uuid(), property_id, endpoint_id, id, event_id, event_type, k, case when k = attempts and status = 'succeeded' then 200 else 500 end, 120,
                at + (k - 1) * interval '1 minute', at + (k - 1) * interval '1 minute' + interval '120 milliseconds'
           from gd cross join generate_series(1, attempts) k`,
      );
    }
    // A history written over years has been vacuumed (hint bits set, visibility map current) and its pages are on
    // disk; a bulk load's are not: the autovacuum it triggers, and the checkpoint writing its pages, would run through
    // every filled table while the measures run.
    await step("vacuum analyze", "vacuum analyze");
    await step("checkpoint", "checkpoint");
  } finally {
    await c.query("drop table if exists gp, gr, gd").catch(() => undefined);
    c.release();
  }
}
