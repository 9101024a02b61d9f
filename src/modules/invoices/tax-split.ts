/**
 * Splitting a tax-inclusive gross amount into net, VAT and accommodation tax, in integer minor units.
 *
 * Hotel prices are gross: what the guest pays already contains VAT and the accommodation tax. Both taxes are
 * levied on the same net amount (the accommodation tax is not part of the VAT base), so
 *
 *     gross = net + net * vat / 10000 + net * acc / 10000        (rates in basis points)
 *     exact VAT = gross * vat / (10000 + vat + acc)
 *     exact accommodation tax = gross * acc / (10000 + vat + acc)
 *
 * Rounding rule: each tax is rounded on its own to the nearest minor unit, halves away from zero; the net
 * amount is what remains, `net = gross - vat - accommodationTax`. So the four figures always add up exactly
 * (`net + vat + accommodationTax == total == gross`), each tax is within half a minor unit of its exact
 * value, and the net amount is within one minor unit of its exact value (it absorbs both roundings).
 * Negative amounts (credits) split symmetrically: split(-g) == -split(g).
 *
 * The split is independent of the currency scale: it works in minor units and the scale only travels along.
 */
export interface TaxSplit {
  netMinor: bigint;
  taxMinor: bigint;
  accommodationTaxMinor: bigint;
  totalMinor: bigint;
}

export interface TaxRates {
  /** VAT rate in basis points (1000 = 10 %). */
  vatRateBp: number;
  /** Accommodation tax rate in basis points (200 = 2 %). */
  accommodationTaxRateBp: number;
}

const BP = 10_000n;

export function splitGross(grossMinor: bigint, rates: TaxRates): TaxSplit {
  const vat = rateToBigint(rates.vatRateBp, "vatRateBp");
  const acc = rateToBigint(rates.accommodationTaxRateBp, "accommodationTaxRateBp");
  const divisor = BP + vat + acc;
  const taxMinor = divideRoundHalfAway(grossMinor * vat, divisor);
  const accommodationTaxMinor = divideRoundHalfAway(grossMinor * acc, divisor);
  return {
    netMinor: grossMinor - taxMinor - accommodationTaxMinor,
    taxMinor,
    accommodationTaxMinor,
    totalMinor: grossMinor,
  };
}

/** Integer division rounding to the nearest integer, halves away from zero. `divisor` must be positive. */
export function divideRoundHalfAway(numerator: bigint, divisor: bigint): bigint {
  if (divisor <= 0n) throw new RangeError("divisor must be positive");
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  const q = (2n * n + divisor) / (2n * divisor); // floor((n + d/2) / d) without losing the half
  return negative ? -q : q;
}

function rateToBigint(bp: number, name: string): bigint {
  if (!Number.isInteger(bp) || bp < 0 || bp > 10_000)
    throw new RangeError(`${name} must be an integer between 0 and 10000`);
  return BigInt(bp);
}
