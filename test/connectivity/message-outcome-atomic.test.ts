import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { newId } from "../../src/lib/ids.ts";
import { setProviderMapping } from "../../src/modules/connectivity/index.ts";

// A partner message that changes a booking commits its outcome (PROCESSED, the partner_message.processed event) in
// the change's own transaction: when the outcome cannot be written, the change is not committed either, and the
// retried job applies the message once.

let app: TestApp;
let property: { id: string; code: string };
let partner: { accessToken: string };

const send = async (body: object): Promise<string> => {
  const res = await fetch(`${app.baseUrl}/api/v1/properties/${property.code}/reservation-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${partner.accessToken}`,
      "content-type": "application/json",
      "idempotency-key": newId(),
    },
    body: JSON.stringify({
      externalReference: "ATOM-1",
      channel: "Booking.com",
      arrivalDate: "2027-06-01",
      departureDate: "2027-06-03",
      currency: "TRY",
      rooms: [{ roomTypeCode: "X-DBL", ratePlanCode: "X-BAR", adults: 2, children: 0, amountMinor: 50000 }],
      totalMinor: 50000,
      ...body,
    }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { eventId: string }).eventId;
};

const sql = async <R>(text: string, params: unknown[] = []): Promise<R[]> =>
  (await app.db.pool.query(text, params)).rows as R[];

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const messageStatus = async (id: string) =>
  (
    await sql<{ status: string; attempts: number }>("select status, attempts from partner_messages where id = $1", [id])
  )[0]!;

beforeAll(async () => {
  app = await startTestApp();
  property = await createTestProperty(app, { code: "ATOM-1", businessDate: "2027-01-01" });
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
  for (const [kind, code, externalCode] of [
    ["room_type", "DBL", "X-DBL"],
    ["rate_plan", "BAR", "X-BAR"],
  ] as const)
    await setProviderMapping(app.db.pool, { propertyCode: property.code, provider: "acme", kind, code, externalCode });
  partner = await createTestClient(app, {
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

describe("a partner message's outcome commits with its change", () => {
  it("a change whose outcome cannot be written is rolled back with it; the retry applies it once", async () => {
    const created = await send({ eventType: "NEW", holder: { name: "First Holder" } });
    expect(
      (
        await until(
          () => messageStatus(created),
          (m) => m.status !== "QUEUED",
        )
      ).status,
    ).toBe("PROCESSED");
    const [reservation] = await sql<{ id: string }>(
      "select id from reservations where property_id = $1 and external_reference = 'ATOM-1'",
      [property.id],
    );
    // the outcome of the next message cannot be recorded while test_refuse_outcome has a row (the trigger itself is
    // dropped only at the end: DROP TRIGGER waits for the drain's open transaction, which waits for the change)
    await sql("create table test_refuse_outcome (on_ boolean)");
    await sql("insert into test_refuse_outcome values (true)");
    await sql(`create or replace function test_refuse_outcome() returns trigger language plpgsql as $$
      begin if new.status <> 'QUEUED' and exists (select 1 from test_refuse_outcome) then raise exception 'outcome refused'; end if;
      return new; end $$`);
    await sql(
      "create trigger test_refuse_outcome before update on partner_messages for each row execute function test_refuse_outcome()",
    );
    const modified = await send({ eventType: "MODIFIED", holder: { name: "Second Holder" } });
    // the worker tried (its job failed and waits for its retry), and nothing of the change is committed
    const failed = await until(
      async () =>
        (
          await sql<{ n: number }>(
            `select count(*)::int as n from pgboss.job where name = 'connectivity.reservation-events'
                and data->>'externalReference' = 'ATOM-1' and (state = 'retry' or retry_count > 1)`,
          )
        )[0]!.n,
      (n) => n > 0,
    );
    expect(failed).toBeGreaterThan(0);
    expect(await messageStatus(modified)).toMatchObject({ status: "QUEUED", attempts: 0 });
    const [held] = await sql<{ holder_name: string }>("select holder_name from reservations where id = $1", [
      reservation!.id,
    ]);
    expect(held!.holder_name).toBe("First Holder");
    await sql("delete from test_refuse_outcome");
    expect(
      await until(
        () => messageStatus(modified),
        (m) => m.status !== "QUEUED",
      ),
    ).toMatchObject({
      status: "PROCESSED",
      attempts: 1,
    });
    const [after] = await sql<{ holder_name: string }>("select holder_name from reservations where id = $1", [
      reservation!.id,
    ]);
    expect(after!.holder_name).toBe("Second Holder");
    // one change, one reservation.updated event, one partner_message.processed event for the message
    const [counts] = await sql<{ updated: number; processed: number }>(
      `select (select count(*)::int from domain_events where type = 'reservation.updated' and data->>'id' = $1) as updated,
              (select count(*)::int from partner_events where type = 'partner_message.processed' and data->>'messageId' = $2) as processed`,
      [reservation!.id, modified],
    );
    expect(counts).toEqual({ updated: 1, processed: 1 });
    await sql("drop trigger test_refuse_outcome on partner_messages");
  }, 60_000);
});
