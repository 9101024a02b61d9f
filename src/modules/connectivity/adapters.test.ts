import { describe, expect, it } from "vitest";
import { AppError } from "../../errors.ts";
import { isCalendarDate } from "../../lib/dates.ts";
import { adapterFor, jsonAdapter, registerAdapter } from "./adapters.ts";

const valid = {
  eventType: "NEW",
  externalReference: "BK-1",
  channel: "Booking.com",
  arrivalDate: "2027-01-10",
  departureDate: "2027-01-12",
  rooms: [{ roomTypeCode: "DBL", ratePlanCode: "BAR", adults: 2, children: 0, amountMinor: 30000 }],
  totalMinor: 30000,
  currency: "TRY",
  holder: { name: "A Guest" },
};

function violations(payload: Record<string, unknown>): string[] {
  try {
    jsonAdapter.parse(payload);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return (err as AppError).details.map((d) => d.field).sort();
  }
}

describe("default JSON adapter", () => {
  it("accepts a complete NEW event", () => {
    expect(jsonAdapter.parse(valid)).toMatchObject({ eventType: "NEW", holderName: "A Guest", totalMinor: 30000 });
  });

  it("accepts a CANCELLED event with only its reference", () => {
    expect(jsonAdapter.parse({ eventType: "CANCELLED", externalReference: "BK-1" }).eventType).toBe("CANCELLED");
  });

  it("names every invalid field", () => {
    expect(violations({ ...valid, eventType: "DELETED" })).toEqual(["eventType"]);
    expect(violations({ ...valid, arrivalDate: "2027-02-30" })).toEqual(["arrivalDate"]);
    expect(violations({ ...valid, departureDate: "2027-01-10" })).toEqual(["departureDate"]);
    expect(violations({ ...valid, totalMinor: 1 })).toEqual(["totalMinor"]);
    expect(violations({ ...valid, rooms: [] })).toEqual(["rooms"]);
    expect(violations({ ...valid, holder: {} })).toEqual(["holder.name"]);
    expect(violations({ ...valid, currency: "try" })).toEqual(["currency"]);
    expect(violations({ ...valid, rooms: [{ ...valid.rooms[0], adults: 0, roomTypeCode: "" }] })).toEqual([
      "rooms[0].adults",
      "rooms[0].roomTypeCode",
    ]);
  });

  it("validates calendar dates", () => {
    expect(isCalendarDate("2028-02-29")).toBe(true);
    expect(isCalendarDate("2027-02-29")).toBe(false);
    expect(isCalendarDate("2027-1-01")).toBe(false);
  });

  it("lets a provider plug in its own adapter", () => {
    registerAdapter("acme", { parse: (p) => jsonAdapter.parse({ ...valid, externalReference: String(p.ref) }) });
    expect(adapterFor("acme").parse({ ref: "X9" }).externalReference).toBe("X9");
    expect(adapterFor("other")).toBe(jsonAdapter);
  });
});
