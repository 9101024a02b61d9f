/**
 * Turkish tax identities as GİB checks them.
 *
 * TCKN (a person, 11 digits): the first digit is not 0; digit 10 is ((d1+d3+d5+d7+d9) * 7 - (d2+d4+d6+d8)) mod 10
 * and digit 11 is (d1+...+d10) mod 10. GİB's placeholder for foreigners and unknown buyers, `11111111111`, does
 * not satisfy the checksum and is accepted as what it is.
 *
 * VKN (a company, 10 digits): for each of the first nine digits d at 0-based position i,
 * t = (d + 9 - i) mod 10, v = (t * 2^(9 - i)) mod 9, and v = 9 when t != 0 and v == 0; the tenth digit is
 * (10 - (sum of v) mod 10) mod 10.
 */
export const PLACEHOLDER_TCKN = "11111111111";

export function isValidTckn(value: string): boolean {
  if (value === PLACEHOLDER_TCKN) return true;
  if (!/^[1-9][0-9]{10}$/.test(value)) return false;
  const d = [...value].map(Number);
  const odd = d[0]! + d[2]! + d[4]! + d[6]! + d[8]!;
  const even = d[1]! + d[3]! + d[5]! + d[7]!;
  const tenth = (((odd * 7 - even) % 10) + 10) % 10;
  if (tenth !== d[9]) return false;
  const first10 = d.slice(0, 10).reduce((s, x) => s + x, 0);
  return first10 % 10 === d[10];
}

export function isValidVkn(value: string): boolean {
  if (!/^[0-9]{10}$/.test(value)) return false;
  const d = [...value].map(Number);
  let sum = 0;
  for (let i = 0; i < 9; i++) {
    const t = (d[i]! + 9 - i) % 10;
    let v = (t * 2 ** (9 - i)) % 9;
    if (t !== 0 && v === 0) v = 9;
    sum += v;
  }
  return (10 - (sum % 10)) % 10 === d[9];
}
