import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { booking, createHotel, services } from "./fixtures.ts";

let app: TestApp;
let svc: ReturnType<typeof services>;
beforeAll(async () => {
  app = await startTestApp({ env: { ROLE: "api" } });
  svc = services(app);
});
afterAll(async () => {
  await app?.close();
});

interface EventRow {
  id: string;
  type: string;
  occurred_at: Date;
  data: Record<string, unknown>;
}

// Insertion order: ids of one millisecond (the test clock stands still) are not ordered among themselves.
async function eventsOf(propertyId: string): Promise<EventRow[]> {
  const { rows } = await app.deps.db.pool.query<EventRow>(
    "select id, type, occurred_at, data from domain_events where property_id = $1 order by created_at, ctid",
    [propertyId],
  );
  return rows;
}

const reservationKeys = [
  "adults",
  "arrivalDate",
  "cancelledAt",
  "channel",
  "children",
  "code",
  "createdAt",
  "departureDate",
  "externalReference",
  "id",
  "roomTypes",
  "source",
  "status",
  "updatedAt",
];
const roomLineKeys = [
  "adults",
  "arrivalDate",
  "checkedInAt",
  "checkedOutAt",
  "children",
  "departureDate",
  "externalReference",
  "reservationCode",
  "reservationId",
  "reservationRoomId",
  "roomNumber",
  "roomTypeCode",
];
const availabilityKeys = ["from", "reason", "roomTypes", "to", "toExclusive"];

describe("event log", () => {
  it("writes exactly the documented fields, no personal data, and one fan-out job per event, for every change", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 2 });
    const { reservation } = await svc.reservations.create(h.actor, {
      ...booking(h, {
        arrivalDate: "2026-11-22",
        departureDate: "2026-11-24",
        externalReference: "EXP-1",
        channel: "expedia",
      }),
      source: "CHANNEL",
      notes: "allergic to feathers",
    });
    const line = reservation.rooms[0]!.id;
    svc.clock.advance(60_000);
    await svc.reservations.update(h.actor, reservation.id, { departureDate: "2026-11-25" });
    await svc.reservations.checkIn(h.actor, reservation.id, line, h.roomIds[0]!);
    svc.clock.advance(60_000);
    await svc.reservations.checkOut(h.actor, reservation.id, line);
    const other = (
      await svc.reservations.create(h.actor, booking(h, { arrivalDate: "2026-12-01", departureDate: "2026-12-03" }))
    ).reservation;
    await svc.reservations.cancel(h.actor, other.id);
    await svc.inventory.createRoomBlock(h.propertyId, {
      roomTypeId: h.roomTypeId,
      from: "2026-12-10",
      to: "2026-12-12",
      count: 1,
    });

    const events = await eventsOf(h.propertyId);
    // The hotel's prices were set first: a rate change is an availability hint too.
    expect(events.shift()!.data).toMatchObject({ reason: "rate" });
    expect(events.map((e) => e.type)).toEqual([
      "reservation.created",
      "availability.changed",
      "reservation.updated",
      "availability.changed",
      "guest.checked_in",
      "reservation.updated",
      "guest.checked_out",
      "reservation.updated",
      // checked out before the departure date: the nights from the business date on are sellable again
      "availability.changed",
      "reservation.created",
      "availability.changed",
      "reservation.cancelled",
      "availability.changed",
      "availability.changed",
    ]);
    for (const e of events) {
      const keys = Object.keys(e.data).sort();
      if (e.type.startsWith("reservation.")) expect(keys).toEqual(reservationKeys);
      else if (e.type.startsWith("guest.")) expect(keys).toEqual(roomLineKeys);
      else expect(keys).toEqual(availabilityKeys);
      const text = JSON.stringify(e.data);
      expect(text).not.toContain("Ayşe");
      expect(text).not.toContain("Yılmaz");
      expect(text).not.toContain("feathers");
    }
    expect(events[0]!.data).toEqual({
      id: reservation.id,
      code: reservation.code,
      status: "GUARANTEED",
      source: "CHANNEL",
      externalReference: "EXP-1",
      channel: "expedia",
      arrivalDate: "2026-11-22",
      departureDate: "2026-11-24",
      adults: 2,
      children: 0,
      roomTypes: ["DBL"],
      cancelledAt: null,
      createdAt: "2026-11-22T09:00:00.000Z",
      updatedAt: "2026-11-22T09:00:00.000Z",
    });
    expect(events[1]!.data).toEqual({
      from: "2026-11-22",
      to: "2026-11-24",
      toExclusive: true,
      roomTypes: ["DBL"],
      reason: "reservation",
    });
    expect(events[2]!.data).toMatchObject({ departureDate: "2026-11-25", updatedAt: "2026-11-22T09:01:00.000Z" });
    expect(events[4]!.data).toEqual({
      reservationId: reservation.id,
      reservationCode: reservation.code,
      externalReference: "EXP-1",
      reservationRoomId: line,
      roomNumber: "101",
      roomTypeCode: "DBL",
      arrivalDate: "2026-11-22",
      departureDate: "2026-11-25",
      adults: 2,
      children: 0,
      checkedInAt: "2026-11-22T09:01:00.000Z",
      checkedOutAt: null,
    });
    expect(events[6]!.data).toMatchObject({
      checkedInAt: "2026-11-22T09:01:00.000Z",
      checkedOutAt: "2026-11-22T09:02:00.000Z",
    });
    expect(events[7]!.data).toMatchObject({ status: "CHECKED_OUT", departureDate: "2026-11-22" });
    expect(events[8]!.data).toEqual({
      from: "2026-11-22",
      to: "2026-11-25",
      toExclusive: true,
      roomTypes: ["DBL"],
      reason: "reservation",
    });
    expect(events[11]!.data).toMatchObject({
      status: "CANCELLED",
      cancelledAt: "2026-11-22T09:02:00.000Z",
      channel: null,
      externalReference: null,
    });
    expect(events[13]!.data).toMatchObject({ reason: "room_block" });

    const { rows: jobs } = await app.deps.db.pool.query<{ event_id: string }>(
      "select data->>'eventId' as event_id from pgboss.job where name = 'events.fanout'",
    );
    const jobbed = new Set(jobs.map((j) => j.event_id));
    for (const e of events) expect(jobbed.has(e.id)).toBe(true);
  });

  it("writes no event and no job when the change fails", async () => {
    const h = await createHotel(app, svc.inventory, { rooms: 1 });
    await svc.reservations.create(h.actor, booking(h));
    const before = (await eventsOf(h.propertyId)).length;
    await expect(svc.reservations.create(h.actor, booking(h))).rejects.toMatchObject({ code: "sold_out" });
    expect((await eventsOf(h.propertyId)).length).toBe(before);
  });
});
