import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { computeItem, invoiceTotals, itemsFromCharges, undiscountedNet, type LineRates } from "./lines.ts";

const vat = fc.constantFrom(0, 100, 1000, 2000);
const rates: fc.Arbitrary<LineRates> = fc
  .record({ vatRateBp: vat, accommodationTaxRateBp: fc.constantFrom(0, 200) })
  .map((r) => ({ ...r, vatExemptionCode: r.vatRateBp === 0 ? "351" : null }));

describe("invoice lines", () => {
  it("every line and the totals per rate add up to the minor unit", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            quantity: fc.integer({ min: 1, max: 60 }),
            unit: fc.bigInt({ min: 1n, max: 10n ** 9n }),
            discountPart: fc.integer({ min: 0, max: 100 }),
            rates,
          }),
          { minLength: 1, maxLength: 20 },
        ),
        (lines) => {
          const items = lines.map((l, i) => {
            const before = BigInt(l.quantity) * l.unit;
            return computeItem(
              {
                lineNo: i + 1,
                chargeCode: "X",
                description: "x",
                unitCode: "C62",
                quantity: l.quantity,
                unitPriceMinor: l.unit,
                discountMinor: (before * BigInt(l.discountPart)) / 100n,
              },
              l.rates,
            );
          });
          for (const it of items) {
            expect(it.netMinor + it.vatMinor + it.accommodationTaxMinor).toBe(it.grossMinor);
            expect(it.grossMinor).toBe(BigInt(it.quantity) * it.unitPriceMinor - it.discountMinor);
            expect(undiscountedNet(it) >= it.netMinor).toBe(true);
          }
          const t = invoiceTotals(items);
          expect(t.netMinor + t.vatMinor + t.accommodationTaxMinor).toBe(t.totalMinor);
          expect(t.vatByRate.reduce((s, r) => s + r.taxMinor, 0n)).toBe(t.vatMinor);
          expect(t.vatByRate.reduce((s, r) => s + r.taxableMinor, 0n)).toBe(t.netMinor);
          expect(t.accommodationByRate.reduce((s, r) => s + r.taxMinor, 0n)).toBe(t.accommodationTaxMinor);
          expect(t.totalMinor).toBe(items.reduce((s, i) => s + i.grossMinor, 0n));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a discount of a minor unit that the taxes' rounding takes leaves no negative allowance", () => {
    // 14 x 0.02 = 0.28 splits to 0.24 net (VAT 0.03, accommodation 0.01); less 0.01, 0.27 splits to 0.25 net
    const item = computeItem(
      {
        lineNo: 1,
        chargeCode: "X",
        description: "x",
        unitCode: "C62",
        quantity: 14,
        unitPriceMinor: 2n,
        discountMinor: 1n,
      },
      { vatRateBp: 1000, accommodationTaxRateBp: 200, vatExemptionCode: null },
    );
    expect(item).toMatchObject({ grossMinor: 27n, netMinor: 25n, vatMinor: 2n, accommodationTaxMinor: 0n });
    expect(undiscountedNet(item)).toBe(25n);
  });

  it("groups charges of one code, text, amount and rates into a line with a quantity", () => {
    const room = { kind: "ROOM" as const, code: "ROOM", description: "Oda", amountMinor: 1500_00n };
    const minibar = { kind: "EXTRA" as const, code: "MINIBAR", description: "Minibar", amountMinor: 45_00n };
    const items = itemsFromCharges([room, minibar, room, { ...room, amountMinor: 1200_00n }, room], (c) =>
      c.kind === "ROOM"
        ? { vatRateBp: 1000, vatExemptionCode: null, accommodationTaxRateBp: 200 }
        : { vatRateBp: 2000, vatExemptionCode: null, accommodationTaxRateBp: 0 },
    );
    expect(items.map((i) => [i.lineNo, i.chargeCode, i.unitCode, i.quantity, i.unitPriceMinor, i.grossMinor])).toEqual([
      [1, "ROOM", "DAY", 3, 1500_00n, 4500_00n],
      [2, "MINIBAR", "C62", 1, 45_00n, 45_00n],
      [3, "ROOM", "DAY", 1, 1200_00n, 1200_00n],
    ]);
    // 4500.00 at 10 % VAT and 2 % accommodation tax: net 4017.85 (the rest), VAT 401.79, accommodation tax 80.36.
    expect(items[0]).toMatchObject({ netMinor: 4017_85n, vatMinor: 401_79n, accommodationTaxMinor: 80_36n });
    expect(items[1]).toMatchObject({ netMinor: 37_50n, vatMinor: 7_50n, accommodationTaxMinor: 0n });
  });

  it("refuses an exemption code on a taxed line and a 0 % line without one", () => {
    const base = {
      lineNo: 1,
      chargeCode: "X",
      description: "x",
      unitCode: "C62" as const,
      quantity: 1,
      unitPriceMinor: 1n,
      discountMinor: 0n,
    };
    expect(() => computeItem(base, { vatRateBp: 0, vatExemptionCode: null, accommodationTaxRateBp: 0 })).toThrow(
      RangeError,
    );
    expect(() => computeItem(base, { vatRateBp: 1000, vatExemptionCode: "351", accommodationTaxRateBp: 0 })).toThrow(
      RangeError,
    );
    expect(() =>
      computeItem({ ...base, quantity: 0 }, { vatRateBp: 1000, vatExemptionCode: null, accommodationTaxRateBp: 0 }),
    ).toThrow(RangeError);
  });
});
