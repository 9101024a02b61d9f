import { AppError, invalidField } from "../../errors.ts";
import { checkMoneyBound } from "../../lib/money.ts";
import { sum } from "./pricing.ts";
import type { BookingDetails, PaymentGuarantee, Reservation } from "./reservation.repository.ts";

const maxRemarks = 20;
const maxRemarkLength = 1000;
const maxGuestsPerRoom = 10;

/**
 * The agreed price of each night (a channel's nightly rates): one per night, each within the money bound, adding
 * up to the line's amount when one is given too. Prices that differ from ours need a price override.
 */
export function agreedNights(
  listed: readonly bigint[],
  nightly: readonly bigint[],
  amount: bigint | undefined,
  priceOverride: boolean,
  field: string,
): bigint[] {
  if (nightly.length !== listed.length)
    throw invalidField(field, `must hold one price for each of the ${listed.length} nights`, "validation_failed");
  for (const [i, n] of nightly.entries()) {
    checkMoneyBound(`${field}[${i}]`, n);
    if (n < 0n) throw invalidField(`${field}[${i}]`, "must not be negative", "validation_failed");
  }
  if (amount !== undefined && sum(nightly) !== amount)
    throw invalidField(field, `must add up to the line's amount (${amount})`, "validation_failed");
  if (!priceOverride && nightly.some((n, i) => n !== listed[i]))
    throw new AppError(
      "validation_failed",
      `${field}: the prices differ from the rate plan's; a price override is needed.`,
      {
        details: [{ field, reason: "differs from the rate plan's prices" }],
      },
    );
  return [...nightly];
}

/**
 * The details to store with a create or a change, or undefined when the input names none (a change then keeps what
 * the reservation has). `before`: the reservation a change starts from (its values stand where the input is silent).
 */
export function bookingDetails(
  input: { remarks?: string[] | undefined; paymentGuarantee?: PaymentGuarantee | null | undefined },
  rooms: readonly { guestNames?: string[] | undefined }[],
  before?: Reservation,
): BookingDetails | undefined {
  if (
    input.remarks === undefined &&
    input.paymentGuarantee === undefined &&
    rooms.every((r) => r.guestNames === undefined)
  )
    return undefined;
  const remarks = input.remarks ?? before?.remarks ?? [];
  if (remarks.length > maxRemarks) throw invalidField("remarks", `at most ${maxRemarks} remarks`, "validation_failed");
  remarks.forEach((r, i) => {
    if (r.trim() === "" || r.length > maxRemarkLength)
      throw invalidField(`remarks[${i}]`, `1-${maxRemarkLength} characters`, "validation_failed");
  });
  const guarantee = input.paymentGuarantee === undefined ? (before?.paymentGuarantee ?? null) : input.paymentGuarantee;
  if (guarantee !== null) {
    if (guarantee.token.trim() === "" || guarantee.token.length > 200)
      throw invalidField("paymentGuarantee.token", "1-200 characters", "validation_failed");
    if (guarantee.cardType.trim() === "" || guarantee.cardType.length > 32)
      throw invalidField("paymentGuarantee.cardType", "1-32 characters", "validation_failed");
    if (guarantee.issuer.length > 64)
      throw invalidField("paymentGuarantee.issuer", "at most 64 characters", "validation_failed");
  }
  const guestNames = rooms.map((r, i) => {
    const names = r.guestNames ?? before?.rooms[i]?.guestNames ?? [];
    if (names.length > maxGuestsPerRoom)
      throw invalidField(`rooms[${i}].guestNames`, `at most ${maxGuestsPerRoom} guests`, "validation_failed");
    return names.map((n, g) => {
      const t = n.trim();
      if (t === "" || t.length > 200)
        throw invalidField(`rooms[${i}].guestNames[${g}]`, "1-200 characters", "validation_failed");
      return t;
    });
  });
  return { remarks: remarks.map((r) => r.trim()), paymentGuarantee: guarantee, guestNames };
}
