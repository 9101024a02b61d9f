/**
 * The Turkish identity number (T.C. Kimlik No): 11 digits, the first not 0, the last two check digits:
 * d10 = ((d1 + d3 + d5 + d7 + d9) * 7 - (d2 + d4 + d6 + d8)) mod 10 and d11 = (d1 + ... + d10) mod 10.
 */
export function isValidTcIdentityNumber(value: string): boolean {
  if (!/^[1-9][0-9]{10}$/.test(value)) return false;
  const d = [...value].map(Number);
  const odd = d[0]! + d[2]! + d[4]! + d[6]! + d[8]!;
  const even = d[1]! + d[3]! + d[5]! + d[7]!;
  // `% 10` of a negative number is negative in JS: bring it back into 0-9
  const d10 = (((odd * 7 - even) % 10) + 10) % 10;
  const d11 = d.slice(0, 10).reduce((a, b) => a + b, 0) % 10;
  return d[9] === d10 && d[10] === d11;
}
