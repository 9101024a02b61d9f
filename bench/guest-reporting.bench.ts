// Check-in with guest reporting (KBS): the same check-ins through the service code on one embedded PostgreSQL,
// measured two ways on alternating rounds:
// - baseline: the reservations service without the reporting hook (check-in as it was before guest reporting);
// - reporting: the app's own service, each line holding two complete guests, so each check-in also seals and
//   writes two guest reports and enqueues their two jobs in its transaction.
// Target: reporting at least 0.8x the baseline's check-ins per second. ROLE=api: no worker sends the reports.
import { pino } from "pino";
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { addDays } from "../src/lib/dates.ts";
import { createReservationService, type ReservationService } from "../src/modules/reservations/index.ts";
import { hotel } from "./frontdesk.bench.ts";
import { benchDatabase } from "./harness.ts";

const businessDate = "2027-01-10";
const rounds = 4;
const perRound = 100;
const concurrency = 10;

export async function benchGuestReporting(): Promise<void> {
  const database = await benchDatabase();
  const app = await createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", ROLE: "api", DATABASE_URL: database.url, LOG_LEVEL: "silent" }),
    { logger: pino({ level: "silent" }) },
  );
  try {
    const h = await hotel(app, "KBS-BENCH", 8, 100);
    const actor = { propertyId: h.p.id, canOverridePrice: false };
    const baseline = createReservationService({ transact: app.deps.transact, pool: app.db.pool, clock: app.clock });
    const scope = await app.services.guests.scopeOf(h.p.id);
    let room = 0;
    let guestNo = 0;
    /** `n` booked stays of two adults, each with a room; with guests: two complete profiles on each line. */
    const book = async (n: number, withGuests: boolean) => {
      const out: { id: string; lineId: string; roomId: string }[] = [];
      for (let i = 0; i < n; i++) {
        const roomIndex = room++;
        const r = await app.services.reservations.create(actor, {
          source: "API",
          channel: null,
          externalReference: null,
          holderName: `Bench Guest ${roomIndex}`,
          arrivalDate: businessDate,
          departureDate: addDays(businessDate, 2),
          rooms: [
            { roomTypeId: h.typeIds[Math.floor(roomIndex / h.roomsPerType)]!, ratePlanId: h.ratePlanId, adults: 2 },
          ],
        });
        const line = { reservationId: r.reservation.id, reservationRoomId: r.reservation.rooms[0]!.id };
        if (withGuests)
          for (let g = 0; g < 2; g++) {
            guestNo++;
            const guest = await app.services.guests.create(scope, {
              ...emptyGuest,
              givenName: "Bench",
              familyName: `Occupant ${guestNo}`,
              nationality: "DE",
              birthDate: "1980-05-06",
              documentType: "PASSPORT",
              documentNumber: `C${String(guestNo).padStart(8, "0")}`,
              documentCountry: "DE",
            });
            await app.services.guests.addToLine(scope, line, guest.id);
          }
        out.push({ id: line.reservationId, lineId: line.reservationRoomId, roomId: h.roomIds[roomIndex]! });
      }
      return out;
    };
    const timed = async (service: ReservationService, stays: Awaited<ReturnType<typeof book>>) => {
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let s = stays[next++]; s !== undefined; s = stays[next++])
            await service.checkIn(actor, s.id, s.lineId, s.roomId);
        }),
      );
      return stays.length / ((performance.now() - started) / 1000);
    };
    const base: number[] = [];
    const withReports: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const plain = await book(perRound, false);
      const occupied = await book(perRound, true);
      base.push(await timed(baseline, plain));
      withReports.push(await timed(app.services.reservations, occupied));
    }
    const { rows } = await app.db.pool.query<{ reports: number; jobs: number }>(
      `select (select count(*)::int from guest_reports where status = 'pending') as reports,
              (select count(*)::int from pgboss.job where name = 'guests.reporting') as jobs`,
    );
    const expected = rounds * perRound * 2;
    if (rows[0]!.reports !== expected || rows[0]!.jobs !== expected)
      throw new Error(`expected ${expected} pending reports and jobs, found ${JSON.stringify(rows[0])}`);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(withReports) / median(base);
    console.log(`check-ins per second, ${rounds} alternating rounds of ${perRound}, ${concurrency} at a time`);
    console.log(
      `  baseline (no reporting)          ${base.map((x) => x.toFixed(0)).join(" ")}  median ${median(base).toFixed(0)}`,
    );
    console.log(
      `  two occupants, two reports each  ${withReports.map((x) => x.toFixed(0)).join(" ")}  median ${median(withReports).toFixed(0)}`,
    );
    console.log(
      `  ratio ${ratio.toFixed(2)}x  (target >= 0.8x) ${ratio >= 0.8 ? "" : "MISSED"}; ${expected} reports and jobs written`,
    );
  } finally {
    await app.close();
    await database.stop();
  }
}

const emptyGuest = {
  givenName: "",
  familyName: "",
  nationality: "",
  birthDate: "",
  documentType: "",
  documentNumber: "",
  documentCountry: "",
  documentExpiry: "",
  email: "",
  phone: "",
  address: "",
  notes: "",
  language: "",
};
