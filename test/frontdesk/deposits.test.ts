import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import {
  CancellationFeeKind,
  DepositDueAnchor,
  InventoryService,
} from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { MobileService } from "../../gen/hotelops/mobile/v1/mobile_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { policyHotel, transportFor, type Face } from "../helpers/policy-hotel.ts";

// Deposits: a rate plan's deposit rule (staff with rates.manage, Connect and gRPC), the deposit each reservation owes
// from when it was made, what its folio has received against it, and the overdue list (ListOverdueDeposits, the
// mobile dashboard over REST, Connect and gRPC). Stays arrive 2026-12-10 for two nights at 10,000 a night.

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
  const { plans, ...h } = await policyHotel(app, ["PCT", "FN", "FREE"]);
  return { ...h, pct: plans.PCT, fn: plans.FN, free: plans.FREE };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

function clients(face: Face, h: Hotel) {
  const t = transportOf(face);
  return {
    inv: createClient(InventoryService, t),
    res: createClient(ReservationService, t),
    folio: createClient(FolioService, t),
    mobile: createClient(MobileService, t),
    opts: { headers: bearer(h.manager.accessToken) },
  };
}

async function failure(work: Promise<unknown>) {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

async function book(face: Face, h: Hotel, ratePlanId: string) {
  const { res, opts } = clients(face, h);
  const { reservation } = await res.createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Ece Tan",
      arrivalDate: "2026-12-10",
      departureDate: "2026-12-12",
      rooms: [{ roomTypeId: h.dbl, ratePlanId, adults: 2, children: 0 }],
    },
    opts,
  );
  return reservation!;
}

async function pay(face: Face, h: Hotel, reservationId: string, amountMinor: bigint) {
  const { folio, opts } = clients(face, h);
  const got = await folio.getFolio({ propertyCode: h.p.code, reservationId }, opts);
  const { payment } = await folio.postPayment(
    { propertyCode: h.p.code, folioId: got.folio!.id, amountMinor, methodCode: "CARD" },
    opts,
  );
  return payment!;
}

async function audit(face: Face, h: Hotel, expectedBusinessDate: string) {
  const { folio, opts } = clients(face, h);
  await folio.runNightAudit({ propertyCode: h.p.code, expectedBusinessDate }, opts);
}

async function overdue(face: Face, h: Hotel) {
  const { res, opts } = clients(face, h);
  const { reservations } = await res.listOverdueDeposits({ propertyCode: h.p.code }, opts);
  return reservations.map((r) => ({ id: r.id, paidMinor: r.deposit!.paidMinor }));
}

/** 30 % two days after booking (PCT); the first night seven days before arrival (FN); FREE asks none. */
async function setDeposits(face: Face, h: Hotel) {
  const { inv, opts } = clients(face, h);
  const pct = await inv.setRatePlanDeposit(
    {
      propertyCode: h.p.code,
      ratePlanId: h.pct,
      deposit: {
        kind: CancellationFeeKind.PERCENT,
        value: 3_000n,
        dueAnchor: DepositDueAnchor.AFTER_BOOKING,
        dueDays: 2,
      },
    },
    opts,
  );
  await inv.setRatePlanDeposit(
    {
      propertyCode: h.p.code,
      ratePlanId: h.fn,
      deposit: {
        kind: CancellationFeeKind.FIRST_NIGHT,
        value: 0n,
        dueAnchor: DepositDueAnchor.BEFORE_ARRIVAL,
        dueDays: 7,
      },
    },
    opts,
  );
  return pct.ratePlan!;
}

describe("deposits", { timeout: 90_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`${face}: a manager sets a deposit rule; rate plan reads show it; bad input is 422 naming the field; another property's plan is 404; front desk is 403`, async () => {
      const h = await hotel();
      const { inv, opts } = clients(face, h);
      const pct = await setDeposits(face, h);
      expect(pct.depositPolicy).toMatchObject({
        kind: CancellationFeeKind.PERCENT,
        value: 3_000n,
        dueAnchor: DepositDueAnchor.AFTER_BOOKING,
        dueDays: 2,
      });
      const { ratePlans } = await inv.listRatePlans({ propertyCode: h.p.code }, opts);
      const byCode = new Map(ratePlans.map((rp) => [rp.code, rp.depositPolicy]));
      expect(byCode.get("FN")).toMatchObject({ kind: CancellationFeeKind.FIRST_NIGHT, dueDays: 7 });
      expect(byCode.get("FREE")).toBeUndefined();

      const ok = {
        kind: CancellationFeeKind.FIXED,
        value: 1_000n,
        dueAnchor: DepositDueAnchor.AFTER_BOOKING,
        dueDays: 1,
      };
      for (const [deposit, field] of [
        [{ ...ok, kind: CancellationFeeKind.UNSPECIFIED }, "deposit.kind"],
        [{ ...ok, value: 0n }, "deposit.value"],
        [{ ...ok, value: 10n ** 13n + 1n }, "deposit.value"],
        [{ ...ok, kind: CancellationFeeKind.PERCENT, value: 10_001n }, "deposit.value"],
        [{ ...ok, kind: CancellationFeeKind.FIRST_NIGHT, value: 5n }, "deposit.value"],
        [{ ...ok, dueAnchor: DepositDueAnchor.UNSPECIFIED }, "deposit.dueAnchor"],
        [{ ...ok, dueDays: 366 }, "deposit.dueDays"],
        [{ ...ok, dueDays: -1 }, "deposit.dueDays"],
      ] as const) {
        const f = await failure(inv.setRatePlanDeposit({ propertyCode: h.p.code, ratePlanId: h.free, deposit }, opts));
        expect(f.code).toBe("validation_failed");
        expect(f.message).toContain(field);
      }
      const other = await hotel();
      const notFound = await failure(
        inv.setRatePlanDeposit({ propertyCode: h.p.code, ratePlanId: other.pct, deposit: ok }, opts),
      );
      expect(notFound.code).toBe("not_found");
      const desk = await createStaffSession(app, { propertyCode: h.p.code, role: "front_desk" });
      const forbidden = await failure(
        inv.setRatePlanDeposit(
          { propertyCode: h.p.code, ratePlanId: h.free, deposit: ok },
          { headers: bearer(desk.accessToken) },
        ),
      );
      expect(forbidden.code).toBe("forbidden");
      const removed = await inv.setRatePlanDeposit({ propertyCode: h.p.code, ratePlanId: h.fn }, opts);
      expect(removed.ratePlan!.depositPolicy).toBeUndefined();

      // the rule's changes are in the audit trail
      const trail = await createClient(MobileService, transportOf(face)).listAuditChanges(
        { entityType: "rate_plan", entityId: h.pct },
        opts,
      );
      expect(trail.changes.map((c) => c.action)).toContain("deposit");
    });

    it(`${face}: each booking owes its deposit by its due date; payments and refunds count against it; the overdue list and the dashboard show what is late`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const h = await hotel();
      await setDeposits(face, h);
      const pct = await book(face, h, h.pct);
      const fn = await book(face, h, h.fn);
      const free = await book(face, h, h.free);
      expect(pct.deposit).toMatchObject({ dueMinor: 6_000n, dueDate: "2026-12-04", paidMinor: 0n, overdue: false });
      expect(fn.deposit).toMatchObject({ dueMinor: 10_000n, dueDate: "2026-12-03", paidMinor: 0n, overdue: false });
      expect(free.deposit).toBeUndefined();

      // a later change of the rule leaves what existing bookings owe
      await clients(face, h).inv.setRatePlanDeposit(
        { propertyCode: h.p.code, ratePlanId: h.pct },
        clients(face, h).opts,
      );

      const payment = await pay(face, h, pct.id, 6_000n);
      await audit(face, h, "2026-12-02");
      await audit(face, h, "2026-12-03");
      // business date 12-04: FN was due 12-03 and is unpaid; PCT is due today and paid
      expect(await overdue(face, h)).toEqual([{ id: fn.id, paidMinor: 0n }]);
      await pay(face, h, fn.id, 4_000n);
      expect(await overdue(face, h)).toEqual([{ id: fn.id, paidMinor: 4_000n }]);
      await audit(face, h, "2026-12-04");
      // a refund of part of PCT's payment leaves it short after its due date
      const { folio, opts, res, mobile } = clients(face, h);
      await folio.refundPayment({ propertyCode: h.p.code, paymentId: payment.id, amountMinor: 1_000n }, opts);
      expect(await overdue(face, h)).toEqual([
        { id: fn.id, paidMinor: 4_000n },
        { id: pct.id, paidMinor: 5_000n },
      ]);
      const got = await res.getReservation({ propertyCode: h.p.code, reservationId: pct.id }, opts);
      expect(got.reservation!.deposit).toMatchObject({ dueMinor: 6_000n, paidMinor: 5_000n, overdue: true });
      const limited = await res.listOverdueDeposits({ propertyCode: h.p.code, limit: 1 }, opts);
      expect(limited.reservations.map((r) => r.id)).toEqual([fn.id]);
      expect(limited.hasMore).toBe(true);
      const next = await res.listOverdueDeposits(
        { propertyCode: h.p.code, limit: 1, cursor: limited.nextCursor },
        opts,
      );
      expect([next.reservations.map((r) => r.id), next.hasMore, next.nextCursor]).toEqual([[pct.id], false, ""]);
      const forged = Buffer.from(JSON.stringify(["not-a-date", fn.code])).toString("base64url");
      const badCursor = await failure(res.listOverdueDeposits({ propertyCode: h.p.code, cursor: forged }, opts));
      expect(badCursor.code).toBe("invalid_argument");
      const dash = await mobile.getDashboard({}, opts);
      expect(dash.overdueDepositCount).toBe(2);
      expect(dash.overdueDeposits.map((d) => [d.code, d.dueDate, d.dueMinor, d.paidMinor])).toEqual([
        [fn.code, "2026-12-03", 10_000n, 4_000n],
        [pct.code, "2026-12-04", 6_000n, 5_000n],
      ]);

      // paid in full, or cancelled: no longer overdue
      await pay(face, h, fn.id, 6_000n);
      await res.cancelReservation({ propertyCode: h.p.code, reservationId: pct.id }, opts);
      expect(await overdue(face, h)).toEqual([]);

      const bad = await failure(res.listOverdueDeposits({ propertyCode: h.p.code, limit: 501 }, opts));
      expect(bad.code).toBe("invalid_argument");
    });
  }

  it("REST: the mobile dashboard lists overdue deposits; the mobile reservation shows its deposit", async () => {
    clock.set("2026-12-02T09:00:00.000Z");
    const h = await hotel();
    await setDeposits("connect", h);
    const fn = await book("connect", h, h.fn);
    await audit("connect", h, "2026-12-02");
    await audit("connect", h, "2026-12-03");
    const headers = bearer(h.manager.accessToken);
    const dash = await fetch(`${app.baseUrl}/api/mobile/v1/dashboard`, { headers });
    expect(dash.status).toBe(200);
    const body = (await dash.json()) as {
      overdueDepositCount: number;
      overdueDeposits: { reservationId: string; dueDate: string; dueMinor: string | number }[];
    };
    expect(body.overdueDepositCount).toBe(1);
    expect(body.overdueDeposits.map((d) => [d.reservationId, d.dueDate, Number(d.dueMinor)])).toEqual([
      [fn.id, "2026-12-03", 10_000],
    ]);
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${fn.id}`, { headers });
    const r = (await res.json()) as { reservation: { deposit: { dueMinor: string | number; overdue: boolean } } };
    expect(Number(r.reservation.deposit.dueMinor)).toBe(10_000);
    expect(r.reservation.deposit.overdue).toBe(true);
  });
});
