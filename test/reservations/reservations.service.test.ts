import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { booking, createHotel, services } from "./fixtures.ts";

let app: TestApp;
let svc: ReturnType<typeof services>;
beforeAll(async () => {
  app = await startTestApp();
  svc = services(app);
});
afterAll(async () => {
  await app?.close();
});

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return "ok";
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

async function sold(propertyId: string, date: string): Promise<number> {
  const { rows } = await app.deps.db.pool.query(
    "select coalesce(sum(sold), 0)::int as n from room_type_days where property_id = $1 and date = $2",
    [propertyId, date],
  );
  return (rows[0] as { n: number }).n;
}

describe("inventory and availability", () => {
  it("computes total - sold - blocked - out of order per day and refuses to go below zero", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 3 });
    await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-11-25", departureDate: "2026-11-27" }));
    await svc.inventory.createRoomBlock(h.propertyId, {
      roomTypeId: h.roomTypeId,
      from: "2026-11-26",
      to: "2026-11-28",
      count: 1,
    });
    await svc.inventory.setRoomStatus(h.propertyId, {
      roomId: h.roomIds[2]!,
      status: "OUT_OF_ORDER",
      outOfOrderFrom: "2026-11-26",
      outOfOrderTo: "2026-11-27",
    });
    const [rt] = await svc.inventory.getAvailability(h.propertyId, { from: "2026-11-24", to: "2026-11-28" });
    expect(rt!.days).toEqual([
      { date: "2026-11-24", total: 3, sold: 0, blocked: 0, outOfOrder: 0, available: 3, overbooked: 0 },
      { date: "2026-11-25", total: 3, sold: 1, blocked: 0, outOfOrder: 0, available: 2, overbooked: 0 },
      { date: "2026-11-26", total: 3, sold: 1, blocked: 1, outOfOrder: 1, available: 0, overbooked: 0 },
      { date: "2026-11-27", total: 3, sold: 0, blocked: 1, outOfOrder: 0, available: 2, overbooked: 0 },
    ]);
    expect(
      await codeOf(
        svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-11-26", departureDate: "2026-11-27" })),
      ),
    ).toBe("sold_out");
    expect(
      await codeOf(
        svc.inventory.createRoomBlock(h.propertyId, {
          roomTypeId: h.roomTypeId,
          from: "2026-11-25",
          to: "2026-11-27",
          count: 2,
        }),
      ),
    ).toBe("no_availability");
    // A housekeeping status today leaves the period planned for later in place; removing the period returns its day.
    await svc.inventory.setRoomStatus(h.propertyId, { roomId: h.roomIds[2]!, status: "CLEAN" });
    const [kept] = await svc.inventory.getAvailability(h.propertyId, { from: "2026-11-26", to: "2026-11-27" });
    expect(kept!.days[0]!.available).toBe(0);
    const [period] = await svc.inventory.listOutOfOrderPeriods(h.propertyId, { roomId: h.roomIds[2]! });
    await svc.inventory.deleteOutOfOrderPeriod(h.propertyId, period!.id);
    const [after] = await svc.inventory.getAvailability(h.propertyId, { from: "2026-11-26", to: "2026-11-27" });
    expect(after!.days[0]!.available).toBe(1);
  });

  it("rejects bad input", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 1 });
    expect(
      await codeOf(svc.inventory.createRoomType(h.propertyId, { code: "bad code", name: "x", maxOccupancy: 2 })),
    ).toBe("invalid_argument");
    expect(
      await codeOf(svc.inventory.createRoomType(h.propertyId, { code: "DBL", name: "dup", maxOccupancy: 2 })),
    ).toBe("conflict");
    expect(await codeOf(svc.inventory.getAvailability(h.propertyId, { from: "2026-01-01", to: "2027-01-03" }))).toBe(
      "invalid_argument",
    );
    expect(await codeOf(svc.inventory.getAvailability(h.propertyId, { from: "2026-02-30", to: "2026-03-03" }))).toBe(
      "invalid_argument",
    );
    expect(
      await codeOf(
        svc.inventory.setPrices(h.propertyId, {
          ratePlanId: h.ratePlanId,
          roomTypeId: h.roomTypeId,
          from: "2026-12-01",
          to: "2026-12-02",
          amountMinor: -1n,
        }),
      ),
    ).toBe("invalid_argument");
    expect(await codeOf(svc.inventory.createRoom(h.propertyId, { number: "999", roomTypeId: "not-a-uuid" }))).toBe(
      "not_found",
    );
  });
});

describe("last room under concurrency", () => {
  it("20 parallel creates for 1 free room: exactly one wins, the rest get sold_out", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 1 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => codeOf(svc.reservations.create(h.actor, booking(h)))),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(1);
    expect(results.filter((r) => r === "sold_out")).toHaveLength(19);
    const [rt] = await svc.inventory.getAvailability(h.propertyId, { from: "2026-11-25", to: "2026-11-27" });
    for (const d of rt!.days) expect(d).toMatchObject({ total: 1, sold: 1, available: 0, overbooked: 0 });
    const { rows } = await app.deps.db.pool.query(
      "select count(*)::int as n from reservations where property_id = $1",
      [h.propertyId],
    );
    expect(rows[0]).toEqual({ n: 1 });
  });
});

describe("create validation", () => {
  it("checks dates, occupancy, currency and the price against the daily prices", async () => {
    const h = await createHotel(app, svc.inventory);
    const r = svc.reservations;
    expect(
      await codeOf(r.create(h.actor, booking(h, { arrivalDate: "2026-11-27", departureDate: "2026-11-27" }))),
    ).toBe("invalid_argument");
    expect(
      await codeOf(r.create(h.actor, booking(h, { arrivalDate: "2026-11-21", departureDate: "2026-11-23" }))),
    ).toBe("validation_failed");
    expect(
      await codeOf(r.create(h.actor, booking(h, { arrivalDate: "2026-12-01", departureDate: "2027-02-15" }))),
    ).toBe("invalid_argument");
    expect(await codeOf(r.create(h.actor, booking(h, { adults: 2, children: 1 })))).toBe("validation_failed");
    expect(await codeOf(r.create(h.actor, booking(h, { adults: 0 })))).toBe("invalid_argument");
    expect(await codeOf(r.create(h.actor, { ...booking(h), currency: "EUR" }))).toBe("validation_failed");
    // Two nights at 1000.00: 200000 minor units.
    expect(await codeOf(r.create(h.actor, booking(h, { amountMinor: 150_000n })))).toBe("validation_failed");
    expect(await codeOf(r.create(h.actor, { ...booking(h), totalMinor: 150_000n }))).toBe("validation_failed");
    // No price after 2027-06-01.
    expect(
      await codeOf(r.create(h.actor, booking(h, { arrivalDate: "2027-05-31", departureDate: "2027-06-02" }))),
    ).toBe("validation_failed");
    const ok = await r.create(h.actor, { ...booking(h), totalMinor: 200_000n, currency: "TRY" });
    expect(ok.reservation.totalMinor).toBe(200_000n);
    expect(ok.reservation.rooms[0]!.nightlyMinor).toEqual([100_000n, 100_000n]);
    // Holding the permission is not enough: the override must be asked for, and asking needs the permission.
    expect(await codeOf(r.create({ ...h.actor, canOverridePrice: true }, booking(h, { amountMinor: 150_001n })))).toBe(
      "validation_failed",
    );
    expect(await codeOf(r.create(h.actor, { ...booking(h, { amountMinor: 150_001n }), priceOverride: true }))).toBe(
      "forbidden",
    );
    const overridden = await r.create(
      { ...h.actor, canOverridePrice: true, by: "user:test" },
      { ...booking(h, { amountMinor: 150_001n }), priceOverride: true },
    );
    expect(overridden.reservation.rooms[0]!.nightlyMinor).toEqual([75_001n, 75_000n]);
    expect(overridden.reservation.totalMinor).toBe(150_001n);
  });

  it("assigns a room given at creation", async () => {
    const h = await createHotel(app, svc.inventory);
    const input = booking(h);
    const { reservation } = await svc.reservations.create(h.actor, {
      ...input,
      rooms: [{ ...input.rooms[0]!, roomId: h.roomIds[1]! }],
    });
    expect(reservation.rooms[0]).toMatchObject({ roomId: h.roomIds[1], roomNumber: "102" });
    expect(
      await codeOf(
        svc.reservations.create(h.actor, { ...input, rooms: [{ ...input.rooms[0]!, roomId: h.roomIds[1]! }] }),
      ),
    ).toBe("conflict");
    expect(await sold(h.propertyId, "2026-11-25")).toBe(1);
  });

  it("a second create with the same channel reference returns the first reservation", async () => {
    const h = await createHotel(app, svc.inventory);
    const input = { ...booking(h, { externalReference: "BK-1", channel: "booking.com" }), source: "CHANNEL" as const };
    const results = await Promise.all([1, 2, 3].map(() => svc.reservations.create(h.actor, input)));
    expect(results.filter((x) => x.created)).toHaveLength(1);
    expect(new Set(results.map((x) => x.reservation.id)).size).toBe(1);
    expect(await sold(h.propertyId, "2026-11-25")).toBe(1);
    // Another channel may use the same reference.
    const other = await svc.reservations.create(h.actor, { ...input, channel: "expedia" });
    expect(other.created).toBe(true);
  });
});

describe("property isolation", () => {
  it("ids of property A are not found from property B", async () => {
    const a = await createHotel(app, svc.inventory);
    const b = await createHotel(app, svc.inventory);
    const { reservation } = await svc.reservations.create(a.actor, booking(a));
    const line = reservation.rooms[0]!.id;
    expect(await codeOf(svc.reservations.get(b.actor, reservation.id))).toBe("not_found");
    expect(await codeOf(svc.reservations.cancel(b.actor, reservation.id))).toBe("not_found");
    expect(await codeOf(svc.reservations.update(b.actor, reservation.id, { notes: "x" }))).toBe("not_found");
    expect(await codeOf(svc.reservations.assignRoom(b.actor, reservation.id, line, b.roomIds[0]!))).toBe("not_found");
    expect(await codeOf(svc.reservations.assignRoom(a.actor, reservation.id, line, b.roomIds[0]!))).toBe("not_found");
    expect(await codeOf(svc.reservations.create(b.actor, booking({ ...b, roomTypeId: a.roomTypeId })))).toBe(
      "not_found",
    );
    expect(await codeOf(svc.reservations.create(b.actor, booking({ ...b, ratePlanId: a.ratePlanId })))).toBe(
      "not_found",
    );
    expect(await codeOf(svc.inventory.setRoomStatus(b.propertyId, { roomId: a.roomIds[0]!, status: "DIRTY" }))).toBe(
      "not_found",
    );
    expect(
      await codeOf(
        svc.inventory.setPrices(b.propertyId, {
          ratePlanId: a.ratePlanId,
          roomTypeId: a.roomTypeId,
          from: "2026-12-01",
          to: "2026-12-02",
          amountMinor: 1n,
        }),
      ),
    ).toBe("not_found");
    expect((await svc.reservations.list(b.actor, {})).reservations).toEqual([]);
    expect((await svc.inventory.listRooms(b.propertyId)).map((r) => r.id).sort()).toEqual([...b.roomIds].sort());
  });
});

describe("update, cancel, assign, check in and out", () => {
  it("moves inventory on date and room type changes and releases it on cancel", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 2 });
    const suite = await svc.inventory.createRoomType(h.propertyId, { code: "STE", name: "Suite", maxOccupancy: 4 });
    await svc.inventory.createRoom(h.propertyId, { number: "501", roomTypeId: suite.id });
    const rp = await svc.inventory.createRatePlan(h.propertyId, {
      code: "BB",
      name: "B&B",
      boardType: "BED_AND_BREAKFAST",
      roomTypeIds: [h.roomTypeId, suite.id],
    });
    await svc.inventory.setPrices(h.propertyId, {
      ratePlanId: rp.id,
      roomTypeId: suite.id,
      from: "2026-11-22",
      to: "2027-01-01",
      amountMinor: 300_000n,
    });
    await svc.inventory.setPrices(h.propertyId, {
      ratePlanId: rp.id,
      roomTypeId: h.roomTypeId,
      from: "2026-11-22",
      to: "2027-01-01",
      amountMinor: 120_000n,
    });
    const { reservation } = await svc.reservations.create(h.actor, booking(h));
    const moved = await svc.reservations.update(h.actor, reservation.id, {
      arrivalDate: "2026-11-26",
      departureDate: "2026-11-29",
      rooms: [{ reservationRoomId: reservation.rooms[0]!.id, roomTypeId: suite.id, ratePlanId: rp.id, adults: 3 }],
    });
    expect(moved).toMatchObject({
      arrivalDate: "2026-11-26",
      departureDate: "2026-11-29",
      adults: 3,
      totalMinor: 900_000n,
    });
    expect(moved.changeSeq).toBeGreaterThan(reservation.changeSeq);
    const avail = await svc.inventory.getAvailability(h.propertyId, { from: "2026-11-25", to: "2026-11-29" });
    expect(avail.find((a) => a.code === "DBL")!.days.map((d) => d.sold)).toEqual([0, 0, 0, 0]);
    expect(avail.find((a) => a.code === "STE")!.days.map((d) => d.sold)).toEqual([0, 1, 1, 1]);
    expect(
      await codeOf(
        svc.reservations.update(h.actor, reservation.id, {
          rooms: [{ reservationRoomId: reservation.rooms[0]!.id, adults: 5 }],
        }),
      ),
    ).toBe("validation_failed");
    const cancelled = await svc.reservations.cancel(h.actor, reservation.id);
    expect(cancelled.status).toBe("CANCELLED");
    expect(cancelled.cancelledAt).toEqual(svc.clock.now());
    expect(await sold(h.propertyId, "2026-11-27")).toBe(0);
    expect(await codeOf(svc.reservations.cancel(h.actor, reservation.id))).toBe("invalid_transition");
    expect(await codeOf(svc.reservations.update(h.actor, reservation.id, { notes: "late" }))).toBe(
      "invalid_transition",
    );
  });

  it("assigns rooms without double booking and checks in and out by the business date and room status", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 3 });
    const [room1, room2, room3] = h.roomIds as [string, string, string];
    const first = (
      await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-11-22", departureDate: "2026-11-24" }))
    ).reservation;
    const second = (
      await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-11-23", departureDate: "2026-11-25" }))
    ).reservation;
    const future = (
      await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-11-24", departureDate: "2026-11-25" }))
    ).reservation;
    await svc.reservations.assignRoom(h.actor, first.id, first.rooms[0]!.id, room1);
    expect(await codeOf(svc.reservations.assignRoom(h.actor, second.id, second.rooms[0]!.id, room1))).toBe("conflict");
    // Back-to-back stays may share a room.
    await svc.reservations.assignRoom(h.actor, future.id, future.rooms[0]!.id, room1);
    await svc.inventory.setRoomStatus(h.propertyId, {
      roomId: room3,
      status: "OUT_OF_ORDER",
      outOfOrderFrom: "2026-11-23",
      outOfOrderTo: "2026-11-24",
    });
    expect(await codeOf(svc.reservations.assignRoom(h.actor, second.id, second.rooms[0]!.id, room3))).toBe("conflict");
    // Check-in before arrival (business date 2026-11-22 < arrival 2026-11-23).
    expect(await codeOf(svc.reservations.checkIn(h.actor, second.id, second.rooms[0]!.id, room2))).toBe("conflict");
    // A dirty room cannot take a guest.
    await svc.inventory.setRoomStatus(h.propertyId, { roomId: room1, status: "DIRTY" });
    expect(await codeOf(svc.reservations.checkIn(h.actor, first.id, first.rooms[0]!.id))).toBe("conflict");
    await svc.inventory.setRoomStatus(h.propertyId, { roomId: room1, status: "INSPECTED" });
    const inHouse = await svc.reservations.checkIn(h.actor, first.id, first.rooms[0]!.id);
    expect(inHouse.status).toBe("IN_HOUSE");
    expect(inHouse.rooms[0]!.checkedInAt).toEqual(svc.clock.now());
    expect(await codeOf(svc.reservations.checkIn(h.actor, first.id, first.rooms[0]!.id))).toBe("conflict");
    const out = await svc.reservations.checkOut(h.actor, first.id, first.rooms[0]!.id);
    expect(out.status).toBe("CHECKED_OUT");
    expect((await svc.inventory.listRooms(h.propertyId)).find((r) => r.id === room1)!.status).toBe("DIRTY");
    expect(await codeOf(svc.reservations.checkOut(h.actor, first.id, first.rooms[0]!.id))).toBe("invalid_transition");
    expect(await codeOf(svc.reservations.checkIn(h.actor, future.id, "00000000-0000-7000-8000-000000000000"))).toBe(
      "not_found",
    );
  });
});

describe("change sequence and listing", () => {
  it("every change takes the next sequence number; paging by cursor sees every change", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 10 });
    const seqs: bigint[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { reservation } = await svc.reservations.create(h.actor, booking(h));
      seqs.push(reservation.changeSeq);
      ids.push(reservation.id);
    }
    seqs.push((await svc.reservations.update(h.actor, ids[0]!, { notes: "quiet room" })).changeSeq);
    seqs.push((await svc.reservations.cancel(h.actor, ids[1]!)).changeSeq);
    expect(seqs).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await svc.reservations.list(h.actor, { cursor, limit: 2 });
      seen.push(...page.reservations.map((r) => r.id));
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual([ids[2], ids[3], ids[4], ids[0], ids[1]]);
    // Nothing new: the cursor stays where it was.
    const empty = await svc.reservations.list(h.actor, { cursor });
    expect(empty).toMatchObject({ reservations: [], hasMore: false, nextCursor: cursor });
    const cancelled = await svc.reservations.list(h.actor, { statuses: ["CANCELLED"] });
    expect(cancelled.reservations.map((r) => r.id)).toEqual([ids[1]]);
    expect(await codeOf(svc.reservations.list(h.actor, { cursor: "garbage" }))).toBe("invalid_argument");
    expect(await codeOf(svc.reservations.list(h.actor, { limit: 501 }))).toBe("invalid_argument");
  });

  it("concurrent writers get distinct, gap-free sequence numbers", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 30 });
    const made = await Promise.all(Array.from({ length: 25 }, () => svc.reservations.create(h.actor, booking(h))));
    const seqs = made.map((m) => m.reservation.changeSeq).sort((a, b) => (a < b ? -1 : 1));
    expect(seqs).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)));
  });
});
