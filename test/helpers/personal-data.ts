import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// No vitest imports here: the global setup scans the run's logs with this.

/** What must never reach a log line: guest and user names used by the tests, e-mails, identity numbers, tokens. */
const personalData: [string, RegExp][] = [
  ["e-mail address", /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.(test|com|org|net|example)\b/],
  ["access token (JWT)", /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}/],
  ["refresh token", /\brt_[A-Za-z0-9_-]{16,}/],
  ["webhook signing secret", /whsec_[A-Za-z0-9+/=_-]{16,}/],
  ["TC identity number", /(?<![\w.-])[1-9]\d{10}(?![\w.])/],
  [
    "guest name",
    /Ayse Yilmaz|Mobile Guest|Channel Guest|Outage Guest|Guest Name|In Flight|Room Guest|Second Sleeper|YILMAZ|AYSE|Sahin|Ayse Gul/,
  ],
  ["card number (the tests' card numbers)", /4111[ -]?1111[ -]?1111[ -]?1111|5555[ -]?5555[ -]?5555[ -]?4444/],
  ["password", /demo-pass-2026|test-pass-2026/],
  ["passport number (the tests' guests)", /U9876543\d/],
  ["birth date (the tests' guests)", /1961-07-23/],
  ["guest address or phone (the tests' guests)", /Kadikoy, Istanbul|\+905321234567|\+4915112345678/],
];

/** The lines that carry personal data, as "<where>:<line>: kind: text". */
export function personalDataIn(lines: readonly string[], where = "log"): string[] {
  const found: string[] = [];
  lines.forEach((line, i) => {
    for (const [kind, pattern] of personalData)
      if (pattern.test(line)) found.push(`${where}:${i + 1}: ${kind}: ${line.slice(0, 300)}`);
  });
  return found;
}

/** Lines of the log files in `dir` that carry personal data. */
export function findPersonalData(dir: string): string[] {
  return readdirSync(dir).flatMap((file) => personalDataIn(readFileSync(join(dir, file), "utf8").split("\n"), file));
}
