import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Transport } from "@connectrpc/connect";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { CancellationFeeKind, InventoryService } from "../../gen/hotelops/inventory/v1/inventory_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession } from "../helpers/auth.ts";
import { policyHotel, transportFor, type Face } from "../helpers/policy-hotel.ts";

// A room line keeps the cancellation and no-show policy its rate plan had when it was booked: changing or removing
// the plan's policy afterwards changes neither what the line shows nor the fee its cancellation or no-show posts.
// Moving the line to another rate plan takes that plan's policy. Istanbul (UTC+3); arrival 2026-12-10.

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
  const { plans, ...h } = await policyHotel(app, ["FIX", "OTHER"]);
  return { ...h, fix: plans.FIX, other: plans.OTHER };
}
type Hotel = Awaited<ReturnType<typeof hotel>>;

function clients(face: Face, h: Hotel) {
  const t = transportOf(face);
  return {
    inv: createClient(InventoryService, t),
    res: createClient(ReservationService, t),
    folio: createClient(FolioService, t),
    opts: { headers: bearer(h.manager.accessToken) },
  };
}

async function setFixed(face: Face, h: Hotel, ratePlanId: string, freeUntilHours: number, feeValue: bigint | null) {
  const { inv, opts } = clients(face, h);
  await inv.setRatePlanPolicy(
    {
      propertyCode: h.p.code,
      ratePlanId,
      ...(feeValue === null ? {} : { policy: { freeUntilHours, feeKind: CancellationFeeKind.FIXED, feeValue } }),
    },
    opts,
  );
}

async function book(
  face: Face,
  h: Hotel,
  ratePlanId: string,
  arrivalDate = "2026-12-10",
  departureDate = "2026-12-12",
) {
  const { res, opts } = clients(face, h);
  const { reservation } = await res.createReservation(
    {
      propertyCode: h.p.code,
      source: ReservationSource.PANEL,
      holderName: "Deniz Aksoy",
      arrivalDate,
      departureDate,
      rooms: [{ roomTypeId: h.dbl, ratePlanId, adults: 2, children: 0 }],
    },
    opts,
  );
  return reservation!;
}

async function fees(face: Face, h: Hotel, reservationId: string) {
  const { folio, opts } = clients(face, h);
  const got = await folio.getFolio({ propertyCode: h.p.code, reservationId }, opts);
  return got.folio!.charges.map((c) => ({ code: c.code, amountMinor: c.amountMinor }));
}

describe("the policy a stay was booked under", { timeout: 60_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`${face}: a policy changed or removed after booking leaves the booking's policy and fees as they were`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const h = await hotel();
      const { res, opts } = clients(face, h);
      await setFixed(face, h, h.fix, 0, 7_500n);
      const before = await book(face, h, h.fix);
      const kept = await book(face, h, h.fix);
      const noShow = await book(face, h, h.fix, "2026-12-02", "2026-12-04");
      // the plan now costs more and is free for longer; then a later booking takes the new policy
      await setFixed(face, h, h.fix, 240, 20_000n);
      const after = await book(face, h, h.fix);
      const got = await res.getReservation({ propertyCode: h.p.code, reservationId: before.id }, opts);
      expect(got.reservation!.rooms[0]!.cancellationPolicy).toMatchObject({
        freeUntilHours: 0,
        feeKind: "FIXED",
        feeValue: 7_500n,
        feeMinor: 7_500n,
      });
      expect(after.rooms[0]!.cancellationPolicy).toMatchObject({ freeUntilHours: 240, feeValue: 20_000n });

      // the night audit of 12-02 marks the no-show: the fee of the policy it was booked under
      const audit = await clients(face, h).folio.runNightAudit(
        { propertyCode: h.p.code, expectedBusinessDate: "2026-12-02" },
        opts,
      );
      expect(audit.summary!.noShowsMarked).toBe(1);
      expect(await fees(face, h, noShow.id)).toEqual([{ code: "NO_SHOW_FEE", amountMinor: 7_500n }]);

      // 12-10 00:30 Istanbul: past every free window; the plan's policy removed altogether
      clock.set("2026-12-09T21:30:00.000Z");
      h.manager = await createStaffSession(app, { propertyCode: h.p.code, role: "manager" });
      await setFixed(face, h, h.fix, 0, null);
      const c = clients(face, h);
      await c.res.cancelReservation({ propertyCode: h.p.code, reservationId: before.id }, c.opts);
      await c.res.cancelReservation({ propertyCode: h.p.code, reservationId: after.id }, c.opts);
      expect(await fees(face, h, before.id)).toEqual([{ code: "CANCELLATION_FEE", amountMinor: 7_500n }]);
      expect(await fees(face, h, after.id)).toEqual([{ code: "CANCELLATION_FEE", amountMinor: 20_000n }]);

      // a line moved to another rate plan takes that plan's policy as it is now (none): cancelling is free
      const moved = await c.res.updateReservation(
        {
          propertyCode: h.p.code,
          reservationId: kept.id,
          rooms: [{ reservationRoomId: kept.rooms[0]!.id, ratePlanId: h.other }],
        },
        c.opts,
      );
      expect(moved.reservation!.rooms[0]!.cancellationPolicy).toBeUndefined();
      await c.res.cancelReservation({ propertyCode: h.p.code, reservationId: kept.id }, c.opts);
      expect(await fees(face, h, kept.id)).toEqual([]);
    });
  }

  it("REST: the mobile reservation shows the policy it was booked under after the plan's changed", async () => {
    clock.set("2026-12-02T09:00:00.000Z");
    const h = await hotel();
    await setFixed("connect", h, h.fix, 24, 5_000n);
    const r = await book("connect", h, h.fix);
    await setFixed("connect", h, h.fix, 48, 9_000n);
    const res = await fetch(`${app.baseUrl}/api/mobile/v1/reservations/${r.id}`, {
      headers: bearer(h.manager.accessToken),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      reservation: { rooms: { cancellationPolicy?: { freeUntilHours: number; feeValue: string | number } }[] };
    };
    const policy = body.reservation.rooms[0]!.cancellationPolicy!;
    expect(policy.freeUntilHours).toBe(24);
    expect(Number(policy.feeValue)).toBe(5_000);
  });
});
