import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { divideRoundHalfAway, splitGross } from "./tax-split.ts";
import { defaultSeries, formatInvoiceNumber } from "./numbering.ts";

const gross = fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n });
const rate = fc.integer({ min: 0, max: 10_000 });
const scale = fc.constantFrom(1, 10, 100, 1000);

describe("splitGross", () => {
  it("adds up exactly for any gross amount, rates and scale", () => {
    fc.assert(
      fc.property(gross, rate, rate, scale, (g, vatRateBp, accommodationTaxRateBp, amountScale) => {
        // The scale only labels minor units; the split of `g` minor units must not depend on it.
        const s = splitGross(g, { vatRateBp, accommodationTaxRateBp });
        expect(s.netMinor + s.taxMinor + s.accommodationTaxMinor).toBe(s.totalMinor);
        expect(s.totalMinor).toBe(g);
        expect(amountScale).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps each tax within half a minor unit and net within one minor unit of the exact value", () => {
    fc.assert(
      fc.property(gross, rate, rate, (g, v, a) => {
        const s = splitGross(g, { vatRateBp: v, accommodationTaxRateBp: a });
        const d = 10_000n + BigInt(v) + BigInt(a);
        const abs = (x: bigint) => (x < 0n ? -x : x);
        // |tax - g*v/d| <= 1/2  <=>  |2*tax*d - 2*g*v| <= d
        expect(abs(2n * s.taxMinor * d - 2n * g * BigInt(v)) <= d).toBe(true);
        expect(abs(2n * s.accommodationTaxMinor * d - 2n * g * BigInt(a)) <= d).toBe(true);
        expect(abs(s.netMinor * d - g * 10_000n) <= d).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("is symmetric for credits and never produces taxes of the wrong sign", () => {
    fc.assert(
      fc.property(gross, rate, rate, (g, v, a) => {
        const rates = { vatRateBp: v, accommodationTaxRateBp: a };
        const pos = splitGross(g, rates);
        const neg = splitGross(-g, rates);
        expect(neg.taxMinor).toBe(-pos.taxMinor);
        expect(neg.accommodationTaxMinor).toBe(-pos.accommodationTaxMinor);
        expect(neg.netMinor).toBe(-pos.netMinor);
        if (g >= 0n) {
          expect(pos.taxMinor >= 0n && pos.accommodationTaxMinor >= 0n && pos.netMinor >= 0n).toBe(true);
        }
      }),
    );
  });

  it("splits the default Turkish rates as documented", () => {
    // 1120.00 TRY gross at 10 % VAT and 2 % accommodation tax: net 1000.00, VAT 100.00, tax 20.00.
    expect(splitGross(112_000n, { vatRateBp: 1000, accommodationTaxRateBp: 200 })).toEqual({
      netMinor: 100_000n,
      taxMinor: 10_000n,
      accommodationTaxMinor: 2_000n,
      totalMinor: 112_000n,
    });
    // 100.00 gross: VAT 1000/112 = 8.928.. -> 8.93, acc 200/112 = 1.785.. -> 1.79, net takes the rest 89.28.
    expect(splitGross(10_000n, { vatRateBp: 1000, accommodationTaxRateBp: 200 })).toEqual({
      netMinor: 8_928n,
      taxMinor: 893n,
      accommodationTaxMinor: 179n,
      totalMinor: 10_000n,
    });
    expect(splitGross(0n, { vatRateBp: 1000, accommodationTaxRateBp: 200 }).netMinor).toBe(0n);
    expect(splitGross(1n, { vatRateBp: 0, accommodationTaxRateBp: 0 })).toEqual({
      netMinor: 1n,
      taxMinor: 0n,
      accommodationTaxMinor: 0n,
      totalMinor: 1n,
    });
  });

  it("rejects rates outside 0..10000 basis points and fractional rates", () => {
    expect(() => splitGross(100n, { vatRateBp: -1, accommodationTaxRateBp: 0 })).toThrow(RangeError);
    expect(() => splitGross(100n, { vatRateBp: 0, accommodationTaxRateBp: 10_001 })).toThrow(RangeError);
    expect(() => splitGross(100n, { vatRateBp: 10.5, accommodationTaxRateBp: 0 })).toThrow(RangeError);
  });
});

describe("divideRoundHalfAway", () => {
  it("rounds halves away from zero", () => {
    expect(divideRoundHalfAway(5n, 2n)).toBe(3n);
    expect(divideRoundHalfAway(-5n, 2n)).toBe(-3n);
    expect(divideRoundHalfAway(4n, 3n)).toBe(1n);
    expect(divideRoundHalfAway(5n, 3n)).toBe(2n);
    expect(() => divideRoundHalfAway(1n, 0n)).toThrow(RangeError);
  });
});

describe("invoice numbers", () => {
  it("formats series, year and a nine-digit sequence", () => {
    expect(formatInvoiceNumber("DEM", 2026, 1n)).toBe("DEM2026000000001");
    expect(formatInvoiceNumber("A1B", 2027, 999_999_999n)).toBe("A1B2027999999999");
    expect(() => formatInvoiceNumber("DEM", 2026, 0n)).toThrow(RangeError);
    expect(() => formatInvoiceNumber("de", 2026, 1n)).toThrow(RangeError);
  });

  it("derives a default series from the property code", () => {
    expect(defaultSeries("DEMO-IST")).toBe("DEM");
    expect(defaultSeries("A-B")).toBe("ABX");
    expect(defaultSeries("9Z")).toBe("9ZX");
  });
});
