import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { booking, createHotel, services, type Hotel } from "./fixtures.ts";

// The database round trips of one create: statements a connection is given while none of its earlier ones is
// unanswered start a round trip; the ones sent behind them (the pool pipelines) ride along.
let app: TestApp;
let hotel: Hotel;
let token: string;
const statements: { trip: boolean; text: string }[] = [];
let counting = false;
const unanswered = new WeakMap<object, number>();
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  app = await startTestApp({ env: { ROLE: "api" } });
  hotel = await createHotel(app, services(app).inventory, { rooms: 40 });
  token = (await createStaffSession(app, { propertyCode: hotel.code, role: "manager" })).accessToken;
  (pg.Client.prototype as { query: unknown }).query = function (this: object, ...args: unknown[]) {
    const n = unanswered.get(this) ?? 0;
    if (counting) {
      const first = args[0] as string | { text: string };
      statements.push({ trip: n === 0, text: typeof first === "string" ? first : first.text });
    }
    unanswered.set(this, n + 1);
    const answered = () => unanswered.set(this, (unanswered.get(this) ?? 1) - 1);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === "function") {
      args[last] = (...a: unknown[]) => {
        answered();
        return (callback as (...x: unknown[]) => unknown)(...a);
      };
      return (originalQuery as (...x: unknown[]) => unknown).apply(this, args);
    }
    const result = (originalQuery as (...x: unknown[]) => unknown).apply(this, args) as Promise<unknown> | undefined;
    if (result !== undefined && typeof result.then === "function") result.then(answered, answered);
    else answered();
    return result;
  };
});
afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await app?.close();
});

async function roundTrips(work: () => Promise<void>): Promise<{ trips: number; log: string }> {
  statements.length = 0;
  counting = true;
  try {
    await work();
  } finally {
    counting = false;
  }
  return {
    trips: statements.filter((s) => s.trip).length,
    log: statements.map((s) => `${s.trip ? "RT" : " +"} ${s.text.replace(/\s+/g, " ").slice(0, 100)}`).join("\n"),
  };
}

const restCreate = (arrivalDate: string, departureDate: string) => async () => {
  const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations`, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json", "idempotency-key": randomUUID() },
    body: JSON.stringify({
      holderName: "Round Trip",
      arrivalDate,
      departureDate,
      roomTypeId: hotel.roomTypeId,
      ratePlanId: hotel.ratePlanId,
      adults: 2,
      totalMinor: 200000,
      currency: "TRY",
    }),
  });
  expect(res.status).toBe(201);
};

describe("database round trips of a reservation create", () => {
  it("the service create: BEGIN with the quote (prices, restrictions), the rows with the night takes, the events, jobs and change sequence with COMMIT", async () => {
    const { reservations } = services(app);
    // the first booking of these nights creates their day rows (one more round trip)
    await reservations.create(hotel.actor, booking(hotel, { arrivalDate: "2026-12-10", departureDate: "2026-12-12" }));
    const { trips, log } = await roundTrips(async () => {
      await reservations.create(
        hotel.actor,
        booking(hotel, { arrivalDate: "2026-12-10", departureDate: "2026-12-12" }),
      );
    });
    expect(trips, log).toBe(3);
  });

  it("a REST create with its Idempotency-Key: 6 round trips (session, rate limit with the key's claim, then the held transaction's 4)", async () => {
    await restCreate("2026-12-01", "2026-12-03")();
    const { trips, log } = await roundTrips(restCreate("2026-12-01", "2026-12-03"));
    expect(trips, log).toBe(6);
    const second = await roundTrips(restCreate("2026-12-01", "2026-12-03"));
    expect(second.trips, second.log).toBe(6);
  });
});
