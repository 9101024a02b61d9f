// The reservation create loop the reservations and growth benches share: `clients` concurrent callers of the
// service's create for `seconds`, each outcome counted.
import { AppError } from "../src/errors.ts";
import type { ReservationService } from "../src/modules/reservations/index.ts";

export interface Stay {
  roomTypeId: string;
  ratePlanId: string;
  arrival: string;
  departure: string;
}

export interface CreateOutcome {
  /** Completed creates (ok or refused) per second. */
  rate: number;
  ok: number;
  noAvailability: number;
  /** Any other error: a bench fails on it (`firstOther` says what it was). */
  other: number;
  firstOther: unknown;
}

/** Creates one-room reservations of `stay(i)` (i = 0, 1, ...) from `clients` loops for `seconds`. */
export async function createLoop(
  reservations: ReservationService,
  propertyId: string,
  opts: { seconds: number; clients: number; holderName: string; stay: (i: number) => Stay },
): Promise<CreateOutcome> {
  let n = 0;
  const outcome: CreateOutcome = { rate: 0, ok: 0, noAvailability: 0, other: 0, firstOther: undefined };
  outcome.rate = await forDuration(opts.seconds, opts.clients, async () => {
    const s = opts.stay(n++);
    try {
      await reservations.create(
        { propertyId, canOverridePrice: false },
        {
          source: "API",
          channel: null,
          externalReference: null,
          holderName: opts.holderName,
          arrivalDate: s.arrival,
          departureDate: s.departure,
          rooms: [{ roomTypeId: s.roomTypeId, ratePlanId: s.ratePlanId, adults: 2 }],
        },
      );
      outcome.ok++;
    } catch (err) {
      if (err instanceof AppError && err.code === "no_availability") outcome.noAvailability++;
      else {
        outcome.other++;
        outcome.firstOther ??= err;
      }
    }
  });
  return outcome;
}

/** Runs `clients` loops of `work` for `seconds`; returns completed calls per second. */
export async function forDuration(seconds: number, clients: number, work: () => Promise<void>): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        await work();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}
