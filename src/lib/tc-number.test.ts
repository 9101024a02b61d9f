import { describe, expect, it } from "vitest";
import { isValidTcIdentityNumber } from "./tc-number.ts";

describe("TC identity number", () => {
  it("accepts numbers whose two check digits hold", () => {
    expect(isValidTcIdentityNumber("10000000146")).toBe(true);
    // d10 = ((1+3+5+7+9)*7 - (2+4+6+8)) mod 10 = 5, d11 = (45+5) mod 10 = 0
    expect(isValidTcIdentityNumber("12345678950")).toBe(true);
  });

  it("handles a negative intermediate sum in the tenth digit", () => {
    // odd digits sum 1, even digits 36: 1*7 - 36 = -29, which is 1 mod 10; sum of d1..d10 = 1 + 36 + 1 = 38
    expect(isValidTcIdentityNumber("19090909018")).toBe(true);
    expect(isValidTcIdentityNumber("19090909098")).toBe(false);
  });

  it("refuses a wrong tenth or eleventh digit", () => {
    expect(isValidTcIdentityNumber("10000000156")).toBe(false);
    expect(isValidTcIdentityNumber("10000000147")).toBe(false);
    expect(isValidTcIdentityNumber("12345678951")).toBe(false);
  });

  it("refuses a leading zero, wrong lengths and non-digits", () => {
    expect(isValidTcIdentityNumber("01234567890")).toBe(false);
    expect(isValidTcIdentityNumber("1000000014")).toBe(false);
    expect(isValidTcIdentityNumber("100000001460")).toBe(false);
    expect(isValidTcIdentityNumber("1000000O146")).toBe(false);
    expect(isValidTcIdentityNumber("")).toBe(false);
  });
});
