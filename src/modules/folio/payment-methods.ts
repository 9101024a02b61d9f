/**
 * Payment methods: a code the front desk picks (`VISA`, `CASH`, `EFT`) and the kind it belongs to, which
 * reports and the `folio.payment_posted` event carry as `methodKind`. One catalogue for every property.
 */
export type PaymentMethodKind = "CASH" | "CARD" | "TRANSFER" | "VOUCHER" | "CITY_LEDGER" | "OTHER";

const paymentMethods: Readonly<Record<string, PaymentMethodKind>> = {
  CASH: "CASH",
  CARD: "CARD",
  VISA: "CARD",
  MASTERCARD: "CARD",
  AMEX: "CARD",
  TROY: "CARD",
  TRANSFER: "TRANSFER",
  EFT: "TRANSFER",
  VOUCHER: "VOUCHER",
  CITY_LEDGER: "CITY_LEDGER",
  OTHER: "OTHER",
};

export function paymentMethodKind(code: string): PaymentMethodKind | undefined {
  return Object.hasOwn(paymentMethods, code) ? paymentMethods[code] : undefined;
}
