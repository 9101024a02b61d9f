/**
 * E-Arşiv style invoice numbers: a three-character series, the four-digit issue year and a nine-digit
 * sequence that starts at 1 every year per property and never skips (GİB format, 16 characters,
 * e.g. `DEM2026000000001`). The sequence comes from a counter row locked in the finalizing transaction.
 */
export function formatInvoiceNumber(series: string, year: number, sequence: bigint): string {
  if (!/^[A-Z0-9]{3}$/.test(series)) throw new RangeError("series must be three characters A-Z or 0-9");
  if (!Number.isInteger(year) || year < 1000 || year > 9999) throw new RangeError("year must have four digits");
  if (sequence < 1n || sequence > 999_999_999n) throw new RangeError("sequence must be between 1 and 999999999");
  return `${series}${year}${sequence.toString().padStart(9, "0")}`;
}

/**
 * The default series of a property: the first three letters or digits of its code, padded with `X`
 * (`DEMO-IST` -> `DEM`). Stored on the counter row the first time the property issues an invoice in a year.
 */
export function defaultSeries(propertyCode: string): string {
  return propertyCode
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "")
    .slice(0, 3)
    .padEnd(3, "X");
}
