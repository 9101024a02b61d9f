import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
type Json = any;

let app: TestApp;
let property: { id: string; code: string };
let live: { accessToken: string };

const send = async (body: unknown, key = newId()): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${live.accessToken}`,
      "content-type": "application/json",
      "idempotency-key": key,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

/** Polls the event's outcome until the worker has applied it. */
async function outcome(eventId: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events/${eventId}`, {
      headers: { authorization: `Bearer ${live.accessToken}` },
    });
    const body = (await res.json()) as Json;
    if (body.status !== "QUEUED") return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`event ${eventId} was not processed`);
}

const stay = {
  arrivalDate: "2027-06-01",
  departureDate: "2027-06-03",
  currency: "TRY",
  holder: { name: "Channel Guest" },
  channel: "Booking.com",
};
const room = (adults = 2) => ({
  roomTypeCode: "X-DBL",
  ratePlanCode: "X-BAR",
  adults,
  children: 0,
  amountMinor: 50000,
});

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "EVT-1", businessDate: "2027-01-01" });
  const inventory = app.services.inventory;
  const dbl = await inventory.createRoomType(property.id, { code: "DBL", name: "Double", maxOccupancy: 2 });
  await inventory.createRoom(property.id, { number: "101", roomTypeId: dbl.id });
  const bar = await inventory.createRatePlan(property.id, {
    code: "BAR",
    name: "Best available",
    boardType: "ROOM_ONLY",
    roomTypeIds: [dbl.id],
  });
  await inventory.setPrices(property.id, {
    ratePlanId: bar.id,
    roomTypeId: dbl.id,
    from: "2027-01-01",
    to: "2027-12-31",
    amountMinor: 25000n,
  });
  await setProviderMapping(app.db.pool, {
    propertyCode: property.code,
    provider: "acme",
    kind: "room_type",
    code: "DBL",
    externalCode: "X-DBL",
  });
  await setProviderMapping(app.db.pool, {
    propertyCode: property.code,
    provider: "acme",
    kind: "rate_plan",
    code: "BAR",
    externalCode: "X-BAR",
  });
  live = await createTestClient(app, {
    kind: "partner",
    provider: "acme",
    propertyCodes: [property.code],
    scopes: ["reservations.write", "reservations.read"],
    approved: true,
  });
});
afterAll(async () => {
  await app?.close();
});

describe("reservation events through the common queue", () => {
  it("NEW creates one CHANNEL reservation; a duplicate NEW returns the same one", async () => {
    const first = await send({
      eventType: "NEW",
      externalReference: "BK-1",
      ...stay,
      rooms: [room()],
      totalMinor: 50000,
    });
    expect(first.status).toBe(202);
    const done = await outcome(first.body.eventId);
    expect(done).toMatchObject({
      status: "PROCESSED",
      reservationId: expect.any(String),
      reservationCode: expect.any(String),
      error: null,
    });
    const again = await outcome(
      (await send({ eventType: "NEW", externalReference: "BK-1", ...stay, rooms: [room()], totalMinor: 50000 })).body
        .eventId,
    );
    expect(again.reservationId).toBe(done.reservationId);
    const rows = await app.db.pool.query(
      "select source, channel, status from reservations where property_id = $1 and external_reference = 'BK-1'",
      [property.id],
    );
    expect(rows.rows).toEqual([{ source: "CHANNEL", channel: "Booking.com", status: "GUARANTEED" }]);
  });

  it("MODIFIED updates and CANCELLED cancels, in order", async () => {
    const mod = await outcome(
      (
        await send({
          eventType: "MODIFIED",
          externalReference: "BK-1",
          ...stay,
          departureDate: "2027-06-04",
          rooms: [room(1)],
          totalMinor: 50000,
        })
      ).body.eventId,
    );
    expect(mod.status).toBe("PROCESSED");
    const cancel = await outcome((await send({ eventType: "CANCELLED", externalReference: "BK-1" })).body.eventId);
    expect(cancel.status).toBe("PROCESSED");
    const r = (
      await app.db.pool.query(
        "select status, to_char(departure_date, 'YYYY-MM-DD') as dep, cancelled_at from reservations where external_reference = 'BK-1'",
      )
    ).rows[0];
    expect(r.status).toBe("CANCELLED");
    expect(r.dep).toBe("2027-06-04");
    expect(r.cancelled_at).not.toBeNull();
  });

  it("rejects unmapped codes and unknown references with a reason; accepts a sold-out room type as an overbooking", async () => {
    const unmapped = await outcome(
      (
        await send({
          eventType: "NEW",
          externalReference: "BK-2",
          ...stay,
          rooms: [{ ...room(), roomTypeCode: "NOPE" }],
          totalMinor: 50000,
        })
      ).body.eventId,
    );
    expect(unmapped).toMatchObject({ status: "REJECTED", reservationId: null });
    expect(unmapped.error).toMatch(/NOPE is not mapped/);
    const unknown = await outcome(
      (await send({ eventType: "CANCELLED", externalReference: "NEVER-SEEN" })).body.eventId,
    );
    expect(unknown.status).toBe("REJECTED");
    // the property has one room: a second overlapping booking is what the channel already sold, an overbooking
    expect(
      (
        await outcome(
          (await send({ eventType: "NEW", externalReference: "BK-3", ...stay, rooms: [room()], totalMinor: 50000 }))
            .body.eventId,
        )
      ).status,
    ).toBe("PROCESSED");
    const full = await outcome(
      (await send({ eventType: "NEW", externalReference: "BK-4", ...stay, rooms: [room()], totalMinor: 50000 })).body
        .eventId,
    );
    expect(full).toMatchObject({ status: "PROCESSED", error: null });
  });

  it("replays the first response for the same Idempotency-Key and refuses the key with another body", async () => {
    const key = newId();
    const a = await send({ eventType: "CANCELLED", externalReference: "BK-9" }, key);
    const b = await send({ eventType: "CANCELLED", externalReference: "BK-9" }, key);
    expect(b.body).toEqual(a.body);
    const c = await send({ eventType: "CANCELLED", externalReference: "BK-10" }, key);
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe("idempotency_conflict");
    const missing = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
      method: "POST",
      headers: { authorization: `Bearer ${live.accessToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(missing.status).toBe(400);
  });

  it("never creates two reservations for parallel identical NEW events", async () => {
    const body = {
      eventType: "NEW",
      externalReference: "BK-PAR",
      ...stay,
      arrivalDate: "2027-07-01",
      departureDate: "2027-07-02",
      rooms: [room()],
      totalMinor: 50000,
    };
    const sent = await Promise.all(Array.from({ length: 10 }, () => send(body)));
    const outcomes = await Promise.all(sent.map((s) => outcome(s.body.eventId)));
    expect(new Set(outcomes.map((o) => o.reservationId)).size).toBe(1);
    const n = await app.db.pool.query(
      "select count(*)::int as n from reservations where external_reference = 'BK-PAR'",
    );
    expect(n.rows[0].n).toBe(1);
  });
});
