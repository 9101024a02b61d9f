import { AppError, type FieldViolation } from "../errors.ts";

/**
 * Card data never enters the service: a card number (PAN: 13-19 digits, spaces or dashes allowed between them, of a
 * card network's range (first digit 2-6) and passing the Luhn check) in any text of an inbound message, or a field
 * named like a card security code, refuses the whole message (422 naming the field, never the value) before anything
 * is stored or logged. Numbers (amounts, counts) and the channel's own booking reference are not card data: a
 * 13-digit amount or reference passes the Luhn check one time in ten, and refusing it would lose a real booking.
 */
const PAN_CANDIDATE = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;
const SECURITY_CODE_NAME = /^(cvc2?|cvv2?|cid|csc|card_?security_?code|security_?code|series_?code)$/i;

export function luhn(digits: string): boolean {
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    total += d;
  }
  return total % 10 === 0;
}

/** True when `text` holds a card number (see above). */
export function holdsCardNumber(text: string): boolean {
  for (const m of text.matchAll(PAN_CANDIDATE)) {
    const digits = m[0].replace(/[ -]/g, "");
    if (digits.length >= 13 && digits.length <= 19 && digits[0]! >= "2" && digits[0]! <= "6" && luhn(digits))
      return true;
  }
  return false;
}

export function isSecurityCodeName(name: string): boolean {
  return SECURITY_CODE_NAME.test(name.replace(/-/g, "_"));
}

/** Identifiers a channel assigns (checked as what they are elsewhere), never read for card numbers. */
const notCardData = new Set(["externalReference"]);

/** The fields of `value` (any JSON-like tree) that carry card data, by path. */
export function cardDataIn(value: unknown, path = ""): FieldViolation[] {
  if (typeof value === "string")
    return holdsCardNumber(value) ? [{ field: path, reason: "holds a card number; send a token instead" }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => cardDataIn(v, `${path}[${i}]`));
  if (value !== null && typeof value === "object") {
    const found: FieldViolation[] = [];
    for (const [k, v] of Object.entries(value)) {
      const p = path === "" ? k : `${path}.${k}`;
      if (isSecurityCodeName(k) && v !== undefined && v !== null && v !== "")
        found.push({ field: p, reason: "is a card security code, which is never accepted" });
      else if (!notCardData.has(k)) found.push(...cardDataIn(v, p));
    }
    return found;
  }
  return [];
}

/** Refuses (422 validation_failed, the fields named, no value repeated) a message that carries card data. */
export function refuseCardData(value: unknown): void {
  const found = cardDataIn(value);
  if (found.length > 0)
    throw new AppError(
      "validation_failed",
      `Card data is never accepted: ${found
        .slice(0, 5)
        .map((f) => f.field)
        .join(", ")}. Send a payment guarantee by token.`,
      { details: found },
    );
}
