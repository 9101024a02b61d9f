import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toAppError } from "../../src/errors.ts";
import { addDays } from "../../src/lib/dates.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createHotel, services, type Hotel } from "./fixtures.ts";

let app: TestApp;
let svc: ReturnType<typeof services>;
beforeAll(async () => {
  app = await startTestApp();
  svc = services(app);
});
afterAll(async () => {
  await app?.close();
});

const start = "2026-11-22";
const rooms = 3;

type Op =
  | { kind: "create"; type: number; from: number; nights: number }
  | { kind: "cancel"; target: number }
  | { kind: "update"; target: number; type: number; from: number; nights: number }
  | { kind: "block"; type: number; from: number; nights: number; count: number }
  | { kind: "outOfOrder"; room: number; from: number; nights: number }
  | { kind: "backInService"; room: number };

const day = fc.integer({ min: 0, max: 6 });
const nights = fc.integer({ min: 1, max: 3 });
const type = fc.integer({ min: 0, max: 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("create" as const), type, from: day, nights }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cancel" as const), target: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("update" as const), target: fc.nat(20), type, from: day, nights }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("block" as const),
      type,
      from: day,
      nights,
      count: fc.integer({ min: 1, max: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("outOfOrder" as const), room: fc.nat(2 * rooms - 1), from: day, nights }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("backInService" as const), room: fc.nat(2 * rooms - 1) }) },
);

/** A hotel with two room types of `rooms` rooms each, both sold through one rate plan. */
async function twoTypeHotel(): Promise<{ h: Hotel; types: { id: string; ratePlanId: string }[]; roomIds: string[] }> {
  const h = await createHotel(app, svc.inventory, { rooms });
  const second = await svc.inventory.createRoomType(h.propertyId, { code: "TWN", name: "Twin", maxOccupancy: 2 });
  const roomIds = [...h.roomIds];
  for (let i = 1; i <= rooms; i++)
    roomIds.push((await svc.inventory.createRoom(h.propertyId, { number: `20${i}`, roomTypeId: second.id })).id);
  const rp = await svc.inventory.createRatePlan(h.propertyId, {
    code: "RO2",
    name: "Room only",
    boardType: "ROOM_ONLY",
    roomTypeIds: [second.id],
  });
  await svc.inventory.setPrices(h.propertyId, {
    ratePlanId: rp.id,
    roomTypeId: second.id,
    from: start,
    to: addDays(start, 30),
    amountMinor: 80_000n,
  });
  return {
    h,
    types: [
      { id: h.roomTypeId, ratePlanId: h.ratePlanId },
      { id: second.id, ratePlanId: rp.id },
    ],
    roomIds,
  };
}

/**
 * Expected failures of a random step, as a caller gets them (toAppError): the inventory refused, a target in the
 * wrong state, a conflict with a concurrent change (409: the caller retries; its transaction rolled back, so the
 * counts below still hold). Anything else, an `internal` error above all, is a bug.
 */
async function attempt(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (err) {
    if (!["sold_out", "no_availability", "invalid_transition", "conflict", "not_found"].includes(toAppError(err).code))
      throw err;
  }
}

describe("per-day inventory under random concurrent changes", () => {
  it("keeps every day row equal to the rooms minus what the reservations, blocks and out-of-order ranges hold", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        async (batches) => {
          const { h, types, roomIds } = await twoTypeHotel();
          const made: string[] = [];
          const stay = (from: number, n: number) => ({
            arrivalDate: addDays(start, from),
            departureDate: addDays(start, from + n),
          });
          for (const batch of batches) {
            // Each batch runs concurrently: writers of the same days race for the last rooms.
            await Promise.all(
              batch.map(async (o) => {
                const t = types[o.kind === "create" || o.kind === "update" || o.kind === "block" ? o.type : 0]!;
                if (o.kind === "create") {
                  const r = svc.reservations.create(h.actor, {
                    source: "DIRECT",
                    channel: null,
                    externalReference: null,
                    holderName: "Guest",
                    ...stay(o.from, o.nights),
                    rooms: [{ roomTypeId: t.id, ratePlanId: t.ratePlanId, adults: 1 }],
                  });
                  await attempt(r.then(({ reservation }) => void made.push(reservation.id)));
                } else if (o.kind === "cancel") {
                  if (made.length > 0) await attempt(svc.reservations.cancel(h.actor, made[o.target % made.length]!));
                } else if (o.kind === "update") {
                  const id = made[o.target % Math.max(1, made.length)];
                  if (id === undefined) return;
                  const before = await svc.reservations.get(h.actor, id);
                  const line = before.rooms[0]!;
                  await attempt(
                    svc.reservations.update(h.actor, id, {
                      ...stay(o.from, o.nights),
                      rooms: [{ reservationRoomId: line.id, roomTypeId: t.id, ratePlanId: t.ratePlanId }],
                    }),
                  );
                } else if (o.kind === "block") {
                  await attempt(
                    svc.inventory.createRoomBlock(h.propertyId, {
                      roomTypeId: t.id,
                      from: addDays(start, o.from),
                      to: addDays(start, o.from + o.nights),
                      count: o.count,
                    }),
                  );
                } else if (o.kind === "outOfOrder") {
                  const { arrivalDate, departureDate } = stay(o.from, o.nights);
                  await attempt(
                    svc.inventory.setRoomStatus(h.propertyId, {
                      roomId: roomIds[o.room]!,
                      status: "OUT_OF_ORDER",
                      outOfOrderFrom: arrivalDate,
                      outOfOrderTo: departureDate,
                    }),
                  );
                } else {
                  await attempt(
                    svc.inventory.setRoomStatus(h.propertyId, { roomId: roomIds[o.room]!, status: "CLEAN" }),
                  );
                }
              }),
            );
          }
          // Recount every stored day from the records that hold rooms.
          const { rows } = await app.deps.db.pool.query<{
            room_type_id: string;
            date: string;
            total: number;
            sold: number;
            blocked: number;
            out_of_order: number;
            room_count: number;
            sold_by_reservations: number;
            blocked_by_blocks: number;
            out_of_order_by_rooms: number;
          }>(
            `select d.room_type_id, to_char(d.date, 'YYYY-MM-DD') as date, d.total, d.sold, d.blocked, d.out_of_order, rt.room_count,
                  (select count(*)::int from reservation_rooms rr join reservations r on r.property_id = rr.property_id and r.id = rr.reservation_id
                    where rr.property_id = d.property_id and rr.room_type_id = d.room_type_id and r.status in ('TENTATIVE', 'GUARANTEED', 'IN_HOUSE')
                      and r.arrival_date <= d.date and r.departure_date > d.date) as sold_by_reservations,
                  (select coalesce(sum(b.count), 0)::int from room_blocks b
                    where b.property_id = d.property_id and b.room_type_id = d.room_type_id and b.from_date <= d.date and b.to_date > d.date) as blocked_by_blocks,
                  (select count(*)::int from room_out_of_order o join rooms rm on rm.property_id = o.property_id and rm.id = o.room_id
                    where o.property_id = d.property_id and rm.room_type_id = d.room_type_id and o.from_date <= d.date and o.to_date > d.date) as out_of_order_by_rooms
             from room_type_days d join room_types rt on rt.property_id = d.property_id and rt.id = d.room_type_id
            where d.property_id = $1`,
            [h.propertyId],
          );
          for (const r of rows) {
            expect(r).toMatchObject({
              total: rooms,
              room_count: rooms,
              sold: r.sold_by_reservations,
              blocked: r.blocked_by_blocks,
              out_of_order: r.out_of_order_by_rooms,
            });
            expect(r.sold + r.blocked + r.out_of_order).toBeLessThanOrEqual(r.total);
          }
          // The availability read shows the same numbers (and the room count on days without a row).
          const availability = await svc.inventory.getAvailability(h.propertyId, {
            from: start,
            to: addDays(start, 10),
          });
          const stored = new Map(rows.map((r) => [`${r.room_type_id}/${r.date}`, r]));
          for (const rt of availability) {
            for (const d of rt.days) {
              expect(d.available).toBe(d.total - d.sold - d.blocked - d.outOfOrder);
              const row = stored.get(`${rt.roomTypeId}/${d.date}`);
              expect(d).toMatchObject(
                row === undefined
                  ? { total: rooms, sold: 0, blocked: 0, outOfOrder: 0 }
                  : { total: row.total, sold: row.sold, blocked: row.blocked, outOfOrder: row.out_of_order },
              );
            }
          }
        },
      ),
      // a failure is reported as found (shrinking a concurrent run re-runs it for minutes, past the test's timeout)
      { numRuns: 12, endOnFailure: true },
    );
  }, 60_000);
});

describe("two changes moving stays across each other's dates", () => {
  it("both go through, again and again: the day rows are locked in one order, not release-then-take", async () => {
    const { h } = await twoTypeHotel();
    const create = (from: number) =>
      svc.reservations.create(h.actor, {
        source: "DIRECT",
        channel: null,
        externalReference: null,
        holderName: "Guest",
        arrivalDate: addDays(start, from),
        departureDate: addDays(start, from + 1),
        rooms: [{ roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId, adults: 1 }],
      });
    const [a, b] = [(await create(0)).reservation, (await create(3)).reservation];
    const move = async (id: string, from: number) => {
      const line = (await svc.reservations.get(h.actor, id)).rooms[0]!;
      await svc.reservations.update(h.actor, id, {
        arrivalDate: addDays(start, from),
        departureDate: addDays(start, from + 1),
        rooms: [{ reservationRoomId: line.id, roomTypeId: h.roomTypeId, ratePlanId: h.ratePlanId }],
      });
    };
    // Each round swaps the two stays at once: one releases the 1st and takes the 4th while the other releases the
    // 4th and takes the 1st (PostgreSQL reports a deadlock, 40P01, when they lock in opposite orders).
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      const [from, to] = round % 2 === 0 ? [0, 3] : [3, 0];
      const outcomes = await Promise.allSettled([move(a.id, to), move(b.id, from)]);
      for (const o of outcomes)
        if (o.status === "rejected") failures.push(`${round}: ${(o.reason as { code?: string }).code ?? o.reason}`);
    }
    expect(failures).toEqual([]);
  });
});
