import { AppError, invalidField } from "../../errors.ts";
import { nightlyPrices } from "../inventory/index.ts";
import { daysBetween } from "../../lib/dates.ts";
import { checkMoneyBound, MAX_MONEY_MINOR } from "../../lib/money.ts";
import { type Queryable } from "../../db/queryable.ts";

/**
 * The nightly prices of a stay from the daily price table (for `adults` on a plan that prices by occupancy). Every
 * night must have a price: a gap means the rate is not sold on that date (422).
 */
export async function stayPrices(
  q: Queryable,
  propertyId: string,
  ratePlanId: string,
  roomTypeId: string,
  arrival: string,
  departure: string,
  field: string,
  adults?: number,
): Promise<bigint[]> {
  const prices = await nightlyPrices(q, propertyId, ratePlanId, roomTypeId, arrival, departure, adults);
  return everyNightPriced(
    prices.map((p) => p.amountMinor),
    daysBetween(arrival, departure),
    field,
  );
}

/** The listed prices of a stay's `nights`, checked to have one for every night (see stayPrices). */
export function everyNightPriced(listed: bigint[], nights: number, field: string): bigint[] {
  if (listed.length !== nights)
    throw invalidField(field, "the rate plan has no price for every night of the stay", "validation_failed");
  return listed;
}

export function sum(values: readonly bigint[]): bigint {
  return values.reduce((a, b) => a + b, 0n);
}

/** The money bound on a stay's (or a line's) total: 422 naming `field` when the prices add up beyond it. */
export function checkStayTotal(field: string, total: bigint): bigint {
  if (total > MAX_MONEY_MINOR)
    throw invalidField(
      field,
      `the stay's price (${total}) is beyond the money bound of ${MAX_MONEY_MINOR} minor units`,
      "validation_failed",
    );
  return total;
}

/**
 * The nightly prices charged for an agreed stay amount: the listed prices when the amount matches them;
 * otherwise, only when the request asked for a price override, the amount spread evenly, the remainder on the
 * first nights. Whether the caller may override is checked before (see CreateReservationInput.priceOverride).
 */
export function chargedNights(
  listed: readonly bigint[],
  amount: bigint | undefined,
  priceOverride: boolean,
  field: string,
): bigint[] {
  const total = sum(listed);
  if (amount !== undefined) checkMoneyBound(field, amount);
  if (amount === undefined || amount === total) return [...checkNights(listed, field)];
  if (amount < 0n) throw invalidField(field, "must not be negative");
  if (!priceOverride) {
    throw new AppError(
      "validation_failed",
      `${field}: ${amount} does not match the price of the stay (${total}); set priceOverride to charge another amount.`,
      { details: [{ field, reason: `expected ${total}` }] },
    );
  }
  const n = BigInt(listed.length);
  const base = amount / n;
  let remainder = amount - base * n;
  return listed.map(() => {
    const extra = remainder > 0n ? 1n : 0n;
    remainder -= extra;
    return base + extra;
  });
}

/** Listed prices within the money bound, in sum (422 naming `field`). */
function checkNights(listed: readonly bigint[], field: string): readonly bigint[] {
  checkStayTotal(field, sum(listed));
  return listed;
}
