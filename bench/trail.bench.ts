// What the audit trail costs reservation creates: the same service, the same hotel and the same 50 concurrent
// clients, in alternating rounds with the trail (as in production) and without it (`recordChanges: false`, an
// option only this bench passes), so drift of the box or of the growing tables falls on both alike. Target: the
// trail costs at most 10 % of creates/s. While the rounds run, pg_stat_activity is sampled every 20 ms: how many
// creates wait on a row lock, and how many of those on the property's reservation-code counter.
import { loadavg } from "node:os";
import pg from "pg";
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import type { Transact } from "../src/db/transaction.ts";
import { addDays } from "../src/lib/dates.ts";
import { createReservationService } from "../src/modules/reservations/index.ts";
import { createLoop } from "./creates.ts";
import { benchDatabase } from "./harness.ts";

const clients = 50;
const roomTypes = 20;
const roomsPerType = 60;
const rounds = 4;
const businessDate = "2027-01-10";

export async function benchTrail(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 8) / 2;
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  const watcher = new pg.Client({ connectionString: database.url });
  await watcher.connect();
  try {
    const { propertyId, types } = await hotel(app);
    const deps = { pool: app.deps.db.pool, clock: app.deps.clock };
    const untracked: Transact = (work, options) => app.deps.transact(work, { ...options, recordChanges: false });
    const services = {
      trail: createReservationService({ ...deps, transact: app.deps.transact }),
      none: createReservationService({ ...deps, transact: untracked }),
    };
    let n = 0;
    const stay = () => {
      const i = n++;
      const arrival = addDays(businessDate, i % 360);
      const t = types[i % types.length]!;
      return { roomTypeId: t.id, ratePlanId: t.ratePlanId, arrival, departure: addDays(arrival, 1 + (i % 3)) };
    };
    const totals = {
      trail: { rate: 0, ok: 0, waits: 0, counterWaits: 0, samples: 0 },
      none: { rate: 0, ok: 0, waits: 0, counterWaits: 0, samples: 0 },
    };
    console.log(`round  mode      creates/s   ok  waiting on a lock (on the code counter), mean per sample`);
    for (let round = 0; round < rounds; round++) {
      // ABBA: the mode that runs first alternates
      for (const mode of round % 2 === 0 ? (["trail", "none"] as const) : (["none", "trail"] as const)) {
        const sampler = sampleLocks(watcher);
        const outcome = await createLoop(services[mode], propertyId, {
          seconds,
          clients,
          holderName: "Bench Guest",
          stay,
        });
        const locks = await sampler.stop();
        if (outcome.other > 0) throw new Error(`create failed: ${String(outcome.firstOther)}`);
        const t = totals[mode];
        t.rate += outcome.rate / rounds;
        t.ok += outcome.ok;
        t.waits += locks.waits;
        t.counterWaits += locks.counterWaits;
        t.samples += locks.samples;
        console.log(
          `${String(round + 1).padStart(5)}  ${mode.padEnd(8)} ${outcome.rate.toFixed(0).padStart(10)} ${String(outcome.ok).padStart(4)}  ` +
            `${(locks.waits / locks.samples).toFixed(1)} (${(locks.counterWaits / locks.samples).toFixed(1)})`,
        );
      }
    }
    const [trailRows] = await app.db.query<{ n: number }>(
      "select count(*)::int as n from audit_changes where property_id = $1 and entity_type = 'reservation'",
      [propertyId],
    );
    if (trailRows!.n !== totals.trail.ok)
      throw new Error(`${trailRows!.n} reservation changes recorded for ${totals.trail.ok} creates with the trail`);
    const cost = 1 - totals.trail.rate / totals.none.rate;
    const latency = (rate: number) => ((clients / rate) * 1000).toFixed(0);
    console.log(
      `\nwithout the trail ${totals.none.rate.toFixed(0)} creates/s (mean ${latency(totals.none.rate)} ms a create), ` +
        `with it ${totals.trail.rate.toFixed(0)} creates/s (mean ${latency(totals.trail.rate)} ms): the trail costs ` +
        `${(cost * 100).toFixed(1)} % (target <= 10 %: ${cost <= 0.1 ? "met" : "MISSED"}); ` +
        `creates waiting on the code counter per sample: ${(totals.trail.counterWaits / totals.trail.samples).toFixed(1)} with, ` +
        `${(totals.none.counterWaits / totals.none.samples).toFixed(1)} without; load average ${loadavg()[0]!.toFixed(2)}`,
    );
  } finally {
    await watcher.end();
    await app.close();
    await database.stop();
  }
}

type App = Awaited<ReturnType<typeof createApp>>;

/** `roomTypes` types of `roomsPerType` rooms, one rate plan each, priced for the next 400 days. */
async function hotel(app: App) {
  const p = await app.services.admin.createProperty({
    groupCode: "BENCH",
    code: "TRAIL",
    name: "Trail",
    timeZone: "Europe/Istanbul",
    currency: "TRY",
    amountScale: 100,
    businessDate,
    emailVerification: false,
    sandbox: false,
  });
  const inv = app.services.inventory;
  const types: { id: string; ratePlanId: string }[] = [];
  for (let t = 0; t < roomTypes; t++) {
    const rt = await inv.createRoomType(p.id, { code: `T${t}`, name: `Type ${t}`, maxOccupancy: 2 });
    for (let r = 0; r < roomsPerType; r++) await inv.createRoom(p.id, { number: `${t}-${r}`, roomTypeId: rt.id });
    const rp = await inv.createRatePlan(p.id, {
      code: `RP${t}`,
      name: "Room only",
      boardType: "ROOM_ONLY",
      roomTypeIds: [rt.id],
    });
    await inv.setPrices(p.id, {
      ratePlanId: rp.id,
      roomTypeId: rt.id,
      from: businessDate,
      to: addDays(businessDate, 400),
      amountMinor: 100_000n,
    });
    types.push({ id: rt.id, ratePlanId: rp.id });
  }
  return { propertyId: p.id, types };
}

/** Samples the sessions waiting on a lock every 20 ms until stopped: their sum, and those on the code counter. */
function sampleLocks(watcher: pg.Client) {
  const sums = { waits: 0, counterWaits: 0, samples: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await watcher.query<{ waits: number; counter: number }>(
        `select count(*)::int as waits,
                count(*) filter (where query like '%reservation_code_counters%')::int as counter
           from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
      );
      sums.waits += rows[0]!.waits;
      sums.counterWaits += rows[0]!.counter;
      sums.samples++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return sums;
    },
  };
}
