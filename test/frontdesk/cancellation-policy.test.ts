import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { CancellationFeeKind, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { policyHotel, transportFor, type Face } from "../helpers/policy-hotel.ts";

// Cancellation and no-show policies of rate plans: set by staff with rates.manage (Connect, gRPC), shown on rate plan
// reads, the mobile options quote (REST) and reservation lines; a late cancellation and a no-show post the fee to the
// folio. The clock is a manual one: Istanbul (UTC+3), arrival 2026-12-10 -> arrival midnight 2026-12-09T21:00Z.

const clock = new ManualClock("2026-12-02T09:00:00.000Z");
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ clock });
});
afterAll(async () => {
  await app?.close();
});

const transportOf = (face: Face): Transport => transportFor(app, face);

async function hotel() {
  const { plans, ...h } = await policyHotel(app, ["FN", "PCT", "FIX", "FREE"], 8);
  return { ...h, fn: plans.FN, pct: plans.PCT, fix: plans.FIX, free: plans.FREE };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

/** Moves the clock; the manager signs in again (the earlier session's token expired on the way). */
async function at(h: Hotel, iso: string) {
  clock.set(iso);
  h.manager = await createStaffSession(app, { propertyCode: h.p.code, role: "manager" });
}

async function failure(work: Promise<unknown>) {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError)
      return { code: err.metadata.get("x-error-code"), message: err.rawMessage, status: err.code };
    throw err;
  }
  throw new Error("expected the call to fail");
}

async function setPolicies(face: Face, h: Hotel) {
  const inv = createClient(InventoryService, transportOf(face));
  const opts = { headers: bearer(h.manager.accessToken) };
  const set = (ratePlanId: string, freeUntilHours: number, feeKind: CancellationFeeKind, feeValue: bigint) =>
    inv.setRatePlanPolicy({ propertyCode: h.p.code, ratePlanId, policy: { freeUntilHours, feeKind, feeValue } }, opts);
  const fn = await set(h.fn, 48, CancellationFeeKind.FIRST_NIGHT, 0n);
  await set(h.pct, 24, CancellationFeeKind.PERCENT, 2_500n);
  await set(h.fix, 0, CancellationFeeKind.FIXED, 7_500n);
  return fn;
}

async function book(
  face: Face,
  h: Hotel,
  ratePlanId: string,
  arrivalDate = "2026-12-10",
  departureDate = "2026-12-12",
) {
  const { reservation } = await createClient(ReservationService, transportOf(face)).createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Selin Koc",
      arrivalDate,
      departureDate,
      rooms: [{ roomTypeId: h.dbl, ratePlanId, adults: 2, children: 0 }],
    },
    { headers: bearer(h.manager.accessToken) },
  );
  return reservation!;
}

async function cancel(face: Face, h: Hotel, reservationId: string) {
  return createClient(ReservationService, transportOf(face)).cancelReservation(
    { propertyCode: h.p.code, reservationId },
    { headers: bearer(h.manager.accessToken) },
  );
}

async function fees(face: Face, h: Hotel, reservationId: string) {
  const { folio } = await createClient(FolioService, transportOf(face)).getFolio(
    { propertyCode: h.p.code, reservationId },
    { headers: bearer(h.manager.accessToken) },
  );
  return folio!.charges.map((c) => ({ code: c.code, amountMinor: c.amountMinor }));
}

describe("cancellation and no-show policies", { timeout: 60_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`${face}: a manager sets a policy; rate plan reads and reservation lines show it; bad input is 422 naming the field; another property's plan is 404; front desk is 403`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const h = await hotel();
      const set = await setPolicies(face, h);
      expect(set.ratePlan!.cancellationPolicy).toMatchObject({
        freeUntilHours: 48,
        feeKind: CancellationFeeKind.FIRST_NIGHT,
        feeValue: 0n,
      });
      const inv = createClient(InventoryService, transportOf(face));
      const opts = { headers: bearer(h.manager.accessToken) };
      const { ratePlans } = await inv.listRatePlans({ propertyCode: h.p.code }, opts);
      const byCode = new Map(ratePlans.map((rp) => [rp.code, rp.cancellationPolicy]));
      expect(byCode.get("PCT")).toMatchObject({
        freeUntilHours: 24,
        feeKind: CancellationFeeKind.PERCENT,
        feeValue: 2_500n,
      });
      expect(byCode.get("FIX")).toMatchObject({
        freeUntilHours: 0,
        feeKind: CancellationFeeKind.FIXED,
        feeValue: 7_500n,
      });
      expect(byCode.get("FREE")).toBeUndefined();

      const r = await book(face, h, h.fn);
      expect(r.rooms[0]!.cancellationPolicy).toMatchObject({
        freeUntilHours: 48,
        feeKind: "FIRST_NIGHT",
        feeMinor: 10_000n,
      });
      expect(new Date(Number(r.rooms[0]!.cancellationPolicy!.freeUntil!.seconds) * 1000).toISOString()).toBe(
        "2026-12-07T21:00:00.000Z",
      );

      const bad = async (policy: { freeUntilHours: number; feeKind: CancellationFeeKind; feeValue: bigint }) =>
        failure(inv.setRatePlanPolicy({ propertyCode: h.p.code, ratePlanId: h.pct, policy }, opts));
      for (const [policy, field] of [
        [{ freeUntilHours: -1, feeKind: CancellationFeeKind.FIXED, feeValue: 1n }, "policy.freeUntilHours"],
        [{ freeUntilHours: 0, feeKind: CancellationFeeKind.UNSPECIFIED, feeValue: 1n }, "policy.feeKind"],
        [{ freeUntilHours: 0, feeKind: CancellationFeeKind.PERCENT, feeValue: 10_001n }, "policy.feeValue"],
        [{ freeUntilHours: 0, feeKind: CancellationFeeKind.FIXED, feeValue: 10n ** 13n + 1n }, "policy.feeValue"],
        [{ freeUntilHours: 0, feeKind: CancellationFeeKind.FIXED, feeValue: 0n }, "policy.feeValue"],
      ] as const) {
        const f = await bad(policy);
        expect(f.code).toBe("validation_failed");
        expect(f.message).toContain(field);
      }

      const other = await hotel();
      const notFound = await failure(
        inv.setRatePlanPolicy(
          {
            propertyCode: h.p.code,
            ratePlanId: other.fn,
            policy: { freeUntilHours: 1, feeKind: CancellationFeeKind.FIXED, feeValue: 1n },
          },
          opts,
        ),
      );
      expect(notFound.code).toBe("not_found");

      const desk = await createStaffSession(app, { propertyCode: h.p.code, role: "front_desk" });
      const forbidden = await failure(
        inv.setRatePlanPolicy(
          {
            propertyCode: h.p.code,
            ratePlanId: h.fn,
            policy: { freeUntilHours: 1, feeKind: CancellationFeeKind.FIXED, feeValue: 1n },
          },
          { headers: bearer(desk.accessToken) },
        ),
      );
      expect(forbidden.code).toBe("forbidden");

      // unset removes the policy
      const removed = await inv.setRatePlanPolicy({ propertyCode: h.p.code, ratePlanId: h.fix }, opts);
      expect(removed.ratePlan!.cancellationPolicy).toBeUndefined();
    });

    it(`${face}: a free cancellation posts nothing; a late one posts the first night, the percentage or the fixed fee`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const h = await hotel();
      await setPolicies(face, h);
      const early = await book(face, h, h.fn);
      await cancel(face, h, early.id);
      expect(await fees(face, h, early.id)).toEqual([]);

      const fn = await book(face, h, h.fn);
      const pct = await book(face, h, h.pct);
      const fix = await book(face, h, h.fix);
      const free = await book(face, h, h.free);
      // 2026-12-09T10:00Z: past FN's (12-07 21:00Z) and PCT's (12-08 21:00Z) windows, not FIX's (12-09 21:00Z)
      await at(h, "2026-12-09T10:00:00.000Z");
      const fixInTime = await cancel(face, h, fix.id);
      expect(fixInTime.reservation!.cancelledAt).toBeDefined();
      expect(await fees(face, h, fix.id)).toEqual([]);
      await cancel(face, h, fn.id);
      await cancel(face, h, pct.id);
      await cancel(face, h, free.id);
      expect(await fees(face, h, fn.id)).toEqual([{ code: "CANCELLATION_FEE", amountMinor: 10_000n }]);
      expect(await fees(face, h, pct.id)).toEqual([{ code: "CANCELLATION_FEE", amountMinor: 5_000n }]);
      expect(await fees(face, h, free.id)).toEqual([]);

      const fixLate = await book(face, h, h.fix);
      await at(h, "2026-12-09T21:00:01.000Z");
      await cancel(face, h, fixLate.id);
      expect(await fees(face, h, fixLate.id)).toEqual([{ code: "CANCELLATION_FEE", amountMinor: 7_500n }]);
    });

    it(`${face}: the night audit's no-show posts the no-show fee; cancelling the no-show afterwards posts nothing more`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const h = await hotel();
      await setPolicies(face, h);
      const fix = await book(face, h, h.fix, "2026-12-02", "2026-12-04");
      const free = await book(face, h, h.free, "2026-12-02", "2026-12-04");
      const { summary } = await createClient(FolioService, transportOf(face)).runNightAudit(
        { propertyCode: h.p.code, expectedBusinessDate: "2026-12-02" },
        { headers: bearer(h.manager.accessToken) },
      );
      expect(summary!.noShowsMarked).toBe(2);
      expect(await fees(face, h, fix.id)).toEqual([{ code: "NO_SHOW_FEE", amountMinor: 7_500n }]);
      expect(await fees(face, h, free.id)).toEqual([]);
      const cancelled = await cancel(face, h, fix.id);
      expect(cancelled.reservation!.cancelledAt).toBeDefined();
      expect(await fees(face, h, fix.id)).toEqual([{ code: "NO_SHOW_FEE", amountMinor: 7_500n }]);
    });
  }

  it("REST: the mobile options quote shows each rate plan's policy", async () => {
    clock.set("2026-12-02T09:00:00.000Z");
    const h = await hotel();
    await setPolicies("connect", h);
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/options`, {
      headers: bearer(h.manager.accessToken),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      ratePlans: {
        code: string;
        cancellationPolicy?: { freeUntilHours: number; feeKind: string; feeValue: number } | null;
      }[];
    };
    const byCode = new Map(body.ratePlans.map((rp) => [rp.code, rp.cancellationPolicy]));
    expect(byCode.get("FN")).toEqual({ freeUntilHours: 48, feeKind: "FIRST_NIGHT", feeValue: 0 });
    expect(byCode.get("PCT")).toEqual({ freeUntilHours: 24, feeKind: "PERCENT", feeValue: 2500 });
    expect(byCode.get("FIX")).toEqual({ freeUntilHours: 0, feeKind: "FIXED", feeValue: 7500 });
    expect(byCode.get("FREE") ?? null).toBeNull();
  });
});
