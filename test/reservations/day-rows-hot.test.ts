import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../../src/lib/dates.ts";
import { poolQueryable } from "../../src/db/queryable.ts";
import { takeRooms } from "../../src/modules/inventory/index.ts";
import { openTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { seedProperty } from "../helpers/hotel-fixtures.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await openTestDatabase({ role: "api" });
});
afterAll(async () => {
  await t?.close();
});

describe("availability day rows", () => {
  it("keep a booking's counter update on the row's page (no second index entry, no dead version elsewhere)", async () => {
    const p = await seedProperty(t.db.pool);
    const q = poolQueryable(t.db.pool);
    const from = "2026-11-22";
    // 1,000 day rows written at once, as a year of bookings leaves them: their pages as full as the table allows.
    await takeRooms(q, { propertyId: p.id, roomTypeId: p.roomTypeId, counter: "sold", from, to: addDays(from, 1000) });
    const page = async (date: string) =>
      (
        await t.db.pool.query<{ page: string; sold: number }>(
          `select (ctid::text::point)[0]::text as page, sold from room_type_days where property_id = $1 and room_type_id = $2 and date = $3`,
          [p.id, p.roomTypeId, date],
        )
      ).rows[0]!;
    const dates = [100, 300, 500, 700].map((d) => addDays(from, d));
    const before = await Promise.all(dates.map(page));
    for (const date of dates)
      await takeRooms(q, {
        propertyId: p.id,
        roomTypeId: p.roomTypeId,
        counter: "sold",
        from: date,
        to: addDays(date, 1),
      });
    const after = await Promise.all(dates.map(page));
    expect(after.map((r) => r.sold)).toEqual(before.map((r) => r.sold + 1));
    expect(after.map((r) => r.page)).toEqual(before.map((r) => r.page));
  });
});
