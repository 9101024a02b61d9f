import { splitGross } from "./tax-split.ts";

/**
 * The lines of an invoice and their totals, in integer minor units.
 *
 * Prices are tax-inclusive. A line is `quantity x unit price - discount = gross`, and its gross is split on its
 * own with its rates (tax-split.ts: each tax rounded to the minor unit, net takes the rest), so every line adds
 * up exactly and the invoice's totals, per VAT rate and overall, are plain sums of its lines: they add up to the
 * minor unit by construction. Folio charges of one code, description, amount and rates become one line whose
 * quantity counts them (30 room nights at one price are one line of quantity 30).
 */
export interface LineRates {
  /** 0, 100, 1000 or 2000 basis points (0, 1, 10, 20 %). */
  vatRateBp: number;
  /** GİB exemption code, set exactly when the VAT rate is 0. */
  vatExemptionCode: string | null;
  /** Accommodation tax (konaklama vergisi); room nights only. */
  accommodationTaxRateBp: number;
}

export interface InvoiceItem extends LineRates {
  lineNo: number;
  chargeCode: string;
  description: string;
  /** UN/ECE Recommendation 20: DAY for room nights, C62 (one) for everything else. */
  unitCode: "DAY" | "C62";
  quantity: number;
  unitPriceMinor: bigint;
  discountMinor: bigint;
  grossMinor: bigint;
  netMinor: bigint;
  vatMinor: bigint;
  accommodationTaxMinor: bigint;
}

export interface ChargeForLine {
  kind: "ROOM" | "EXTRA";
  code: string;
  description: string;
  amountMinor: bigint;
}

interface RateTotal {
  vatRateBp: number;
  vatExemptionCode: string | null;
  taxableMinor: bigint;
  taxMinor: bigint;
}

export interface InvoiceTotals {
  netMinor: bigint;
  vatMinor: bigint;
  accommodationTaxMinor: bigint;
  totalMinor: bigint;
  /** One entry per VAT rate (and exemption code), by rate. */
  vatByRate: RateTotal[];
  /** One entry per accommodation tax rate above 0, by rate. */
  accommodationByRate: { rateBp: number; taxableMinor: bigint; taxMinor: bigint }[];
}

/** One line: quantity x unit price less the discount, split with the line's rates. */
export function computeItem(
  base: Pick<
    InvoiceItem,
    "lineNo" | "chargeCode" | "description" | "unitCode" | "quantity" | "unitPriceMinor" | "discountMinor"
  >,
  rates: LineRates,
): InvoiceItem {
  if (!Number.isInteger(base.quantity) || base.quantity < 1)
    throw new RangeError("quantity must be a positive integer");
  if (base.discountMinor < 0n) throw new RangeError("discount must not be negative");
  if ((rates.vatRateBp === 0) !== (rates.vatExemptionCode !== null))
    throw new RangeError("an exemption code goes with a 0 % VAT rate, and only with it");
  const grossMinor = BigInt(base.quantity) * base.unitPriceMinor - base.discountMinor;
  const s = splitGross(grossMinor, rates);
  return {
    ...base,
    ...rates,
    grossMinor,
    netMinor: s.netMinor,
    vatMinor: s.taxMinor,
    accommodationTaxMinor: s.accommodationTaxMinor,
  };
}

/**
 * The net amount of a line before its discount: what `quantity x unit price` splits to, and never less than the
 * line's net (the document's allowance, this minus the net, is never negative). Each tax is rounded on its own, so a
 * discount of a minor unit or two can leave more net than the undiscounted amount splits to (0.28 at 10 % VAT and 2 %
 * accommodation tax splits to 0.24 net, 0.27 to 0.25): the discount then lands wholly in the taxes.
 */
export function undiscountedNet(item: InvoiceItem): bigint {
  const net = splitGross(BigInt(item.quantity) * item.unitPriceMinor, item).netMinor;
  return net > item.netMinor ? net : item.netMinor;
}

/** Folio charges grouped into lines (first appearance order), each group's rates from `ratesOf`. */
export function itemsFromCharges<C extends ChargeForLine>(
  charges: readonly C[],
  ratesOf: (c: C) => LineRates,
): InvoiceItem[] {
  const groups = new Map<string, { charge: C; rates: LineRates; quantity: number }>();
  for (const c of charges) {
    const rates = ratesOf(c);
    const key = JSON.stringify([c.kind, c.code, c.description, c.amountMinor.toString(), rates]);
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { charge: c, rates, quantity: 1 });
    else g.quantity += 1;
  }
  return [...groups.values()].map((g, i) =>
    computeItem(
      {
        lineNo: i + 1,
        chargeCode: g.charge.code,
        description: g.charge.description,
        unitCode: g.charge.kind === "ROOM" ? "DAY" : "C62",
        quantity: g.quantity,
        unitPriceMinor: g.charge.amountMinor,
        discountMinor: 0n,
      },
      g.rates,
    ),
  );
}

export function invoiceTotals(items: readonly InvoiceItem[]): InvoiceTotals {
  const vat = new Map<string, RateTotal>();
  const acc = new Map<number, { rateBp: number; taxableMinor: bigint; taxMinor: bigint }>();
  let netMinor = 0n;
  let vatMinor = 0n;
  let accommodationTaxMinor = 0n;
  let totalMinor = 0n;
  for (const it of items) {
    netMinor += it.netMinor;
    vatMinor += it.vatMinor;
    accommodationTaxMinor += it.accommodationTaxMinor;
    totalMinor += it.grossMinor;
    const key = `${it.vatRateBp}/${it.vatExemptionCode ?? ""}`;
    const v = vat.get(key) ?? {
      vatRateBp: it.vatRateBp,
      vatExemptionCode: it.vatExemptionCode,
      taxableMinor: 0n,
      taxMinor: 0n,
    };
    v.taxableMinor += it.netMinor;
    v.taxMinor += it.vatMinor;
    vat.set(key, v);
    if (it.accommodationTaxRateBp > 0) {
      const a = acc.get(it.accommodationTaxRateBp) ?? {
        rateBp: it.accommodationTaxRateBp,
        taxableMinor: 0n,
        taxMinor: 0n,
      };
      a.taxableMinor += it.netMinor;
      a.taxMinor += it.accommodationTaxMinor;
      acc.set(it.accommodationTaxRateBp, a);
    }
  }
  const vatByRate = [...vat.values()].sort((a, b) => a.vatRateBp - b.vatRateBp);
  const accommodationByRate = [...acc.values()].sort((a, b) => a.rateBp - b.rateBp);
  return { netMinor, vatMinor, accommodationTaxMinor, totalMinor, vatByRate, accommodationByRate };
}
