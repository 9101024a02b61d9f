import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import {
  CancellationFeeKind,
  DepositDueAnchor,
  InventoryService,
} from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer } from "../helpers/auth.ts";
import { policyHotel, transportFor } from "../helpers/policy-hotel.ts";

// The options quote shows the deposit each rate plan asks (GetReservationOptions over REST, Connect and gRPC): the
// plan's rule beside its cancellation policy and, per quoted stay, the amount and due date a booking made on the
// business date would owe, the same the booking then shows. Business date 2026-12-02, 10,000 a night.

const clock = new ManualClock("2026-12-02T09:00:00.000Z");
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ clock });
});
afterAll(async () => {
  await app?.close();
});

/** PCT: 30 % two days after booking; FN: the first night seven days before arrival; FIX: 50,000; FREE: none. */
async function hotel() {
  const h = await policyHotel(app, ["PCT", "FN", "FIX", "FREE"]);
  const inv = createClient(InventoryService, transportFor(app, "connect"));
  const opts = { headers: bearer(h.manager.accessToken) };
  for (const [code, kind, value, dueAnchor, dueDays] of [
    ["PCT", CancellationFeeKind.PERCENT, 3_000n, DepositDueAnchor.AFTER_BOOKING, 2],
    ["FN", CancellationFeeKind.FIRST_NIGHT, 0n, DepositDueAnchor.BEFORE_ARRIVAL, 7],
    ["FIX", CancellationFeeKind.FIXED, 50_000n, DepositDueAnchor.AFTER_BOOKING, 0],
  ] as const)
    await inv.setRatePlanDeposit(
      { propertyCode: h.p.code, ratePlanId: h.plans[code], deposit: { kind, value, dueAnchor, dueDays } },
      opts,
    );
  return h;
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

interface Seen {
  rules: Record<string, unknown>;
  quotes: Record<string, unknown>;
}

/** The options for a stay as one face answers them, by rate plan code; int64 as numbers. */
async function options(face: "rest" | "connect" | "grpc", h: Hotel, arrivalDate: string, departureDate: string) {
  const codeOf = new Map(Object.entries(h.plans).map(([code, id]) => [id, code]));
  const seen: Seen = { rules: {}, quotes: {} };
  if (face === "rest") {
    const res = await fetch(
      `${app.baseUrl}/api/mobile/v1/reservations/options?arrivalDate=${arrivalDate}&departureDate=${departureDate}`,
      { headers: bearer(h.manager.accessToken) },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      ratePlans: { code: string; depositPolicy: unknown }[];
      quotes: { ratePlanId: string; deposit: unknown }[];
    };
    for (const rp of body.ratePlans) seen.rules[rp.code] = rp.depositPolicy;
    for (const q of body.quotes) seen.quotes[codeOf.get(q.ratePlanId)!] = q.deposit;
    return seen;
  }
  const mobile = createClient(MobileService, transportFor(app, face));
  const o = await mobile.getReservationOptions(
    { arrivalDate, departureDate },
    { headers: bearer(h.manager.accessToken) },
  );
  const rule = (d: { kind: string; value: bigint; dueAnchor: string; dueDays: number } | undefined) =>
    d === undefined ? null : { kind: d.kind, value: Number(d.value), dueAnchor: d.dueAnchor, dueDays: d.dueDays };
  for (const rp of o.ratePlans) seen.rules[rp.code] = rule(rp.depositPolicy);
  for (const q of o.quotes)
    seen.quotes[codeOf.get(q.ratePlanId)!] =
      q.deposit === undefined
        ? null
        : { amountMinor: Number(q.deposit.amountMinor), dueDate: q.deposit.dueDate, rule: rule(q.deposit.rule) };
  return seen;
}

const pctRule = { kind: "PERCENT", value: 3_000, dueAnchor: "AFTER_BOOKING", dueDays: 2 };
const fnRule = { kind: "FIRST_NIGHT", value: 0, dueAnchor: "BEFORE_ARRIVAL", dueDays: 7 };
const fixRule = { kind: "FIXED", value: 50_000, dueAnchor: "AFTER_BOOKING", dueDays: 0 };

describe("the options quote shows the deposit", { timeout: 60_000 }, () => {
  for (const face of ["rest", "connect", "grpc"] as const) {
    it(`${face}: each plan's rule beside its policy; each quote's amount and due date, capped and clamped`, async () => {
      const h = await hotel();
      const later = await options(face, h, "2026-12-10", "2026-12-12");
      expect(later.rules).toEqual({ PCT: pctRule, FN: fnRule, FIX: fixRule, FREE: null });
      expect(later.quotes).toEqual({
        PCT: { amountMinor: 6_000, dueDate: "2026-12-04", rule: pctRule },
        FN: { amountMinor: 10_000, dueDate: "2026-12-03", rule: fnRule },
        // a fixed deposit is never more than the stay
        FIX: { amountMinor: 20_000, dueDate: "2026-12-02", rule: fixRule },
        FREE: null,
      });
      // arriving in two days: seven days before arrival is before the booking, so due on the business date; two
      // days after booking is the arrival date
      const soon = await options(face, h, "2026-12-04", "2026-12-05");
      expect(soon.quotes).toMatchObject({
        PCT: { amountMinor: 3_000, dueDate: "2026-12-04" },
        FN: { amountMinor: 10_000, dueDate: "2026-12-02" },
        FIX: { amountMinor: 10_000, dueDate: "2026-12-02" },
        FREE: null,
      });
      // without dates there is nothing to quote; the rules still show
      const undated = createClient(MobileService, transportFor(app, "connect"));
      const o = await undated.getReservationOptions({}, { headers: bearer(h.manager.accessToken) });
      expect(o.quotes).toEqual([]);
      expect(o.ratePlans.find((rp) => rp.code === "FN")!.depositPolicy).toMatchObject({ kind: "FIRST_NIGHT" });
    });
  }

  it("connect: a booking made on the quote's terms owes what the quote showed", async () => {
    const h = await hotel();
    const quoted = await options("connect", h, "2026-12-10", "2026-12-12");
    const res = createClient(ReservationService, transportFor(app, "connect"));
    for (const code of ["PCT", "FN", "FIX"] as const) {
      const { reservation } = await res.createReservation(
        {
          propertyCode: h.p.code,
          source: ReservationSource.PANEL,
          holderName: "Ece Tan",
          arrivalDate: "2026-12-10",
          departureDate: "2026-12-12",
          rooms: [{ roomTypeId: h.dbl, ratePlanId: h.plans[code], adults: 2, children: 0 }],
        },
        { headers: bearer(h.manager.accessToken) },
      );
      const { amountMinor, dueDate } = quoted.quotes[code] as { amountMinor: number; dueDate: string };
      expect(reservation!.deposit).toMatchObject({ dueMinor: BigInt(amountMinor), dueDate });
    }
  });
});
