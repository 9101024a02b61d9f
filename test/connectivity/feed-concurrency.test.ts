import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestClient, createTestProperty } from "../helpers/auth.ts";
import { doubleRoomsAtBar, roomNumbers } from "../helpers/hotel-fixtures.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe("change feed under concurrent writes", () => {
  it("a page walk running while reservations are written misses none and repeats none", async () => {
    const property = await createTestProperty(app, { code: "FEED-C", businessDate: "2027-01-01" });
    const hotel = await doubleRoomsAtBar(app.services.inventory, property.id, roomNumbers(100, 159), 2, {
      from: "2027-01-01",
      to: "2027-03-01",
      amountMinor: 10000n,
    });
    const rt = { id: hotel.roomTypeId };
    const rp = { id: hotel.ratePlanId };
    const reservations = app.services.reservations;
    const client = await createTestClient(app, {
      kind: "partner",
      provider: "acme",
      propertyCodes: [property.code],
      scopes: ["reservations.read"],
    });
    await app.db.pool.query("update api_clients set rate_limit_per_minute = 100000 where id = $1", [client.clientId]);

    const actor = { propertyId: property.id, canOverridePrice: false };
    let writing = true;
    const writers = (async () => {
      const all = [];
      for (let batch = 0; batch < 8; batch++) {
        all.push(
          ...(await Promise.all(
            Array.from({ length: 5 }, (_, i) =>
              reservations.create(actor, {
                source: "API",
                channel: null,
                externalReference: `W-${batch}-${i}`,
                holderName: "Guest",
                arrivalDate: "2027-02-01",
                departureDate: "2027-02-02",
                rooms: [{ roomTypeId: rt.id, ratePlanId: rp.id, adults: 1 }],
              }),
            ),
          )),
        );
      }
      writing = false;
      return all.map((r) => r.reservation.id);
    })();

    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const stillWriting = writing;
      const res = await fetch(
        `${app.baseUrl}/api/v1/properties/${property.code}/reservations?limit=7${cursor ? `&cursor=${cursor}` : ""}`,
        { headers: { authorization: `Bearer ${client.accessToken}` } },
      );
      expect(res.status).toBe(200);
      const page = (await res.json()) as { data: { id: string }[]; nextCursor: string; hasMore: boolean };
      seen.push(...page.data.map((r) => r.id));
      cursor = page.nextCursor;
      if (!page.hasMore && !stillWriting) break;
    }
    const written = await writers;
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...written].sort());
  });
});
