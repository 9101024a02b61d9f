import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { FolioService } from "../../gen/hotelops/folio/v1/folio_pb.js";
import { ReservationService, ReservationSource } from "../../gen/hotelops/reservation/v1/reservation_pb.js";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, createStaffSession, createTestProperty } from "../helpers/auth.ts";

// The late check-out fee: a manager's property rule (after an hour, hotel time) posts LATE_CHECKOUT_FEE at a
// check-out on the departure date after that hour; before it, or on a day use, nothing. Istanbul is UTC+3.

const clock = new ManualClock("2026-12-02T09:00:00.000Z");
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ clock });
});
afterAll(async () => {
  await app?.close();
});

type Face = "connect" | "grpc";
const transportOf = (face: Face): Transport =>
  face === "grpc"
    ? createGrpcTransport({ baseUrl: app.baseUrl })
    : createConnectTransport({ baseUrl: app.baseUrl, httpVersion: "1.1" });

async function failure(work: Promise<unknown>) {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.metadata.get("x-error-code"), message: err.rawMessage };
    throw err;
  }
  throw new Error("expected the call to fail");
}

describe("late check-out fee", { timeout: 60_000 }, () => {
  for (const face of ["connect", "grpc"] as const) {
    it(`${face}: after the rule's hour on the departure date the fee is posted; before it and on a day use nothing; bad rules are 422`, async () => {
      clock.set("2026-12-02T09:00:00.000Z");
      const p = await createTestProperty(app, { businessDate: "2026-12-02", timeZone: "Europe/Istanbul" });
      const inv = app.services.inventory;
      const dbl = await inv.createRoomType(p.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
      const rooms = [];
      for (const n of ["201", "202", "203"])
        rooms.push((await inv.createRoom(p.id, { number: n, roomTypeId: dbl.id })).id);
      const bar = await inv.createRatePlan(p.id, {
        code: "BAR",
        name: "Bar",
        boardType: "ROOM_ONLY",
        roomTypeIds: [dbl.id],
      });
      await inv.setPrices(p.id, {
        ratePlanId: bar.id,
        roomTypeId: dbl.id,
        from: "2026-12-01",
        to: "2027-01-31",
        amountMinor: 10_000n,
      });
      let token = (await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken;
      const res = () => createClient(ReservationService, transportOf(face));
      const opts = () => ({ headers: bearer(token) });

      for (const [rule, field] of [
        [{ afterHour: 24, feeKind: "FIXED", feeValue: 1n }, "rule.afterHour"],
        [{ afterHour: 12, feeKind: "HOURLY", feeValue: 1n }, "rule.feeKind"],
        [{ afterHour: 12, feeKind: "PERCENT", feeValue: 10_001n }, "rule.feeValue"],
      ] as const) {
        const f = await failure(res().setLateCheckOutRule({ propertyCode: p.code, rule }, opts()));
        expect(f.code).toBe("validation_failed");
        expect(f.message).toContain(field);
      }
      const rule =
        face === "connect"
          ? { afterHour: 12, feeKind: "FIXED", feeValue: 2_500n }
          : { afterHour: 12, feeKind: "PERCENT", feeValue: 5_000n };
      const set = await res().setLateCheckOutRule({ propertyCode: p.code, rule }, opts());
      expect(set.rule).toMatchObject(rule);

      const stay = async (arrivalDate: string, departureDate: string, roomId: string) => {
        const { reservation } = await res().createReservation(
          {
            propertyCode: p.code,
            source: ReservationSource.PANEL,
            holderName: "Selin Koc",
            arrivalDate,
            departureDate,
            rooms: [{ roomTypeId: dbl.id, ratePlanId: bar.id, adults: 2, children: 0 }],
          },
          opts(),
        );
        const line = reservation!.rooms[0]!.id;
        await res().checkInRoomLine(
          { propertyCode: p.code, reservationId: reservation!.id, reservationRoomId: line, roomId },
          opts(),
        );
        return { id: reservation!.id, line };
      };
      const early = await stay("2026-12-02", "2026-12-03", rooms[0]!);
      const late = await stay("2026-12-02", "2026-12-03", rooms[1]!);
      await createClient(FolioService, transportOf(face)).runNightAudit(
        { propertyCode: p.code, expectedBusinessDate: "2026-12-02" },
        opts(),
      );
      const at = async (iso: string) => {
        clock.set(iso);
        token = (await createStaffSession(app, { propertyCode: p.code, role: "manager" })).accessToken;
      };
      const checkOut = (s: { id: string; line: string }) =>
        res().checkOutRoomLine({ propertyCode: p.code, reservationId: s.id, reservationRoomId: s.line }, opts());
      const fees = async (reservationId: string) => {
        const { folio } = await createClient(FolioService, transportOf(face)).getFolio(
          { propertyCode: p.code, reservationId },
          opts(),
        );
        return folio!.charges
          .filter((c) => c.code !== "ROOM")
          .map((c) => ({ code: c.code, amountMinor: c.amountMinor }));
      };

      await at("2026-12-03T08:59:00.000Z"); // 11:59 in Istanbul
      await checkOut(early);
      expect(await fees(early.id)).toEqual([]);
      await at("2026-12-03T10:30:00.000Z"); // 13:30
      await checkOut(late);
      expect(await fees(late.id)).toEqual([
        { code: "LATE_CHECKOUT_FEE", amountMinor: face === "connect" ? 2_500n : 5_000n },
      ]);

      // a day use: in and out on the arrival date, after the hour: the stay ends early, no late fee
      const dayUse = await stay("2026-12-03", "2026-12-04", rooms[2]!);
      await checkOut(dayUse);
      expect(await fees(dayUse.id)).toEqual([]);

      // no rule: nothing
      const removed = await res().setLateCheckOutRule({ propertyCode: p.code }, opts());
      expect(removed.rule).toBeUndefined();
    });
  }
});
