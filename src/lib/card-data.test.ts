import { describe, expect, it } from "vitest";
import { cardDataIn, holdsCardNumber, luhn } from "./card-data.ts";

describe("card data", () => {
  it("finds a card number of a card network's range passing Luhn, with spaces or dashes", () => {
    expect(holdsCardNumber("card 4111 1111 1111 1111 please")).toBe(true);
    expect(holdsCardNumber("5555-5555-5555-4444")).toBe(true);
    expect(holdsCardNumber("378282246310005")).toBe(true);
    expect(holdsCardNumber("4111 1111 1111 1112")).toBe(false);
  });

  it("leaves alone what only looks like one: a reference, an amount, a number outside the card ranges", () => {
    // the digits of PGB-1796214569344-8 pass the Luhn check (as one number in ten does), but no card starts with 1
    expect(luhn("17962145693448")).toBe(true);
    expect(holdsCardNumber("PGB-1796214569344-8")).toBe(false);
    expect(cardDataIn({ externalReference: "PGB-4111111111111111-8", totalMinor: 4111111111111111 })).toEqual([]);
    expect(cardDataIn({ remarks: ["call 4111111111111111"] })).toEqual([
      { field: "remarks[0]", reason: "holds a card number; send a token instead" },
    ]);
    expect(cardDataIn({ guarantee: { cvv: "123" } })).toEqual([
      { field: "guarantee.cvv", reason: "is a card security code, which is never accepted" },
    ]);
  });
});
