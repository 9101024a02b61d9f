import { invalidField, type ErrorCode } from "../errors.ts";

/**
 * The money bound: the largest amount, in minor units, that any entry path accepts (a price, a reservation line
 * or total, a partner's amounts, a charge, a payment, a refund) and the largest a folio balance may reach either
 * way. 10^13 keeps every sum the service computes far inside a safe JSON integer (2^53 - 1) and inside int64.
 */
export const MAX_MONEY_MINOR = 10n ** 13n;

/** `field: must be at most 10000000000000` (400 unless told otherwise) when `amount` is beyond the money bound. */
export function checkMoneyBound(field: string, amount: bigint, code: ErrorCode = "invalid_argument"): void {
  if (amount > MAX_MONEY_MINOR || amount < -MAX_MONEY_MINOR)
    throw invalidField(field, `must be at most ${MAX_MONEY_MINOR} minor units (the money bound)`, code);
}

/** Whether a number given in JSON is a whole number of minor units within the money bound. */
export function withinMoneyBound(amount: number): boolean {
  return Number.isSafeInteger(amount) && Math.abs(amount) <= Number(MAX_MONEY_MINOR);
}

/**
 * ISO 4217 currencies with their minor unit as an amount scale (minor units per major unit): 1 for no decimals
 * (JPY), 100 for two (TRY), 1000 for three (KWD). Codes without a minor unit (gold, SDR, test codes) and the two
 * four-decimal units of account (CLF, UYW) are not currencies a hotel prices in and are left out.
 */
const noDecimals = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF";
const threeDecimals = "BHD IQD JOD KWD LYD OMR TND";
const twoDecimals =
  "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF " +
  "CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF " +
  "IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN " +
  "MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS " +
  "SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG";

const currencyScales: ReadonlyMap<string, number> = new Map([
  ...noDecimals.split(" ").map((c) => [c, 1] as const),
  ...twoDecimals.split(" ").map((c) => [c, 100] as const),
  ...threeDecimals.split(" ").map((c) => [c, 1000] as const),
]);

/** The amount scale of an ISO 4217 currency code (upper case), or undefined when it is not one. */
export function currencyScale(code: string): number | undefined {
  return currencyScales.get(code);
}

export function isIsoCurrency(code: string): boolean {
  return currencyScales.has(code);
}
