import { parse, type Details, type FieldName, type ParseResult } from "mrz";
import { isValidTcIdentityNumber } from "../../lib/tc-number.ts";

/** TD1: identity cards, three lines of 30 characters. TD3: passports, two lines of 44. */
export type MrzFormat = "TD1" | "TD3";

const mrzShape: Record<MrzFormat, { lines: number; width: number; codes: string }> = {
  TD1: { lines: 3, width: 30, codes: "IAC" },
  TD3: { lines: 2, width: 44, codes: "P" },
};

export interface ReadField {
  /** What was read, also when it failed its checks; null when nothing usable was read. */
  value: string | null;
  valid: boolean;
  /** A lookalike character (0/O, 8/B, ...) was changed to satisfy the check digit: compare with the document. */
  corrected?: boolean;
}

interface ScanProblem {
  field: string;
  reason: string;
}

export interface MrzReading {
  format: MrzFormat;
  valid: boolean;
  documentNumber: ReadField;
  surname: ReadField;
  givenNames: ReadField;
  nationality: ReadField;
  issuingState: ReadField;
  birthDate: ReadField;
  sex: ReadField;
  expiryDate: ReadField;
  /** The Turkish identity number: on TD1 cards of TUR, and on TUR passports whose personal number holds one. */
  tcIdentityNumber: ReadField | null;
  expired: boolean;
  problems: ScanProblem[];
}

const MRZ_CHARS = /[^A-Z0-9<]/g;

/**
 * The MRZ lines of `format` in OCR output: lines of about the right width (OCR drops a few filler `<` of a long
 * run now and then, or doubles one; those are mended in the longest `<` run), the last run of consecutive such lines, preferring
 * one whose first line starts with the format's document code. Undefined when there is none.
 */
export function findMrzLines(ocrText: string, format: MrzFormat): string[] | undefined {
  const { lines: count, width, codes } = mrzShape[format];
  const lines = ocrText.split("\n").map((l) => l.toUpperCase().replace(MRZ_CHARS, ""));
  const groups: string[][] = [];
  for (let i = 0; i + count <= lines.length; i++) {
    const group = lines.slice(i, i + count);
    if (group.every((l) => l.length >= width - 6 && l.length <= width + 3 && l.includes("<")))
      groups.push(group.map((l) => fitWidth(l, width)));
  }
  const preferred = groups.filter((g) => codes.includes(g[0]![0]!));
  return (preferred.length > 0 ? preferred : groups).at(-1);
}

/** Pads or trims a line to `width` in its longest `<` run (where OCR miscounts), else at its end. */
export function fitWidth(line: string, width: number): string {
  let out = line;
  while (out.length !== width) {
    const run = longestFillerRun(out);
    const at = run === undefined ? out.length : run.start + run.length;
    out =
      out.length < width
        ? `${out.slice(0, at)}<${out.slice(at)}`
        : run === undefined
          ? out.slice(0, -1)
          : out.slice(0, at - 1) + out.slice(at);
  }
  return out;
}

function longestFillerRun(line: string): { start: number; length: number } | undefined {
  let best: { start: number; length: number } | undefined;
  for (const m of line.matchAll(/<+/g))
    if (best === undefined || m[0].length > best.length) best = { start: m.index, length: m[0].length };
  return best;
}

/** Characters OCR confuses, each way round; tried in alphanumeric fields when a check digit fails. */
const LOOKALIKES: Record<string, string[]> = {
  "0": ["O", "D", "Q"],
  O: ["0"],
  D: ["0"],
  Q: ["0"],
  "1": ["I"],
  I: ["1"],
  "2": ["Z"],
  Z: ["2"],
  "5": ["S"],
  S: ["5"],
  "8": ["B"],
  B: ["8"],
  "6": ["G"],
  G: ["6"],
};
const TO_DIGIT: Record<string, string> = { O: "0", D: "0", Q: "0", I: "1", Z: "2", S: "5", B: "8", G: "6" };

export interface ReadOptions {
  /** Today (YYYY-MM-DD, UTC): decides the century of birth years and whether the document has expired. */
  today: string;
}

/** Parses MRZ lines (from findMrzLines, or typed) into checked fields. */
export function readMrz(input: string[], opts: ReadOptions): MrzReading {
  const lines = digitsWhereNumeric(input);
  const parsed = parse(lines, { autocorrect: true });
  const corrected = correctDocumentNumber(lines, parsed);
  const result = corrected ?? parsed;
  const reading = toReading(result, withAutocorrections(lines, result), opts);
  if (corrected !== undefined) reading.documentNumber.corrected = true;
  return reading;
}

/** The lines with the parser's autocorrections (O to 0 in numeric fields, 0 to O in alphabetic ones) applied. */
function withAutocorrections(lines: string[], result: ParseResult): string[] {
  const out = lines.map((l) => [...l]);
  for (const d of result.details) for (const a of d.autocorrect) out[a.line]![a.column] = a.corrected;
  return out.map((l) => l.join(""));
}

/**
 * A Turkish card keeps the TC identity number in its optional data and a Turkish passport in its personal
 * number: digits only, so letters OCR put there are mapped back to the digits they resemble.
 */
function digitsWhereNumeric(lines: string[]): string[] {
  const out = [...lines];
  const toDigits = (s: string): string => s.replace(/[ODQIZSBG]/g, (c) => TO_DIGIT[c]!);
  const turkish = (out[0] ?? "").slice(2, 5) === "TUR";
  if (!turkish) return out;
  if (out.length === 3 && out[0]!.length === 30)
    out[0] = out[0]!.slice(0, 15) + toDigits(out[0]!.slice(15, 26)) + out[0]!.slice(26);
  if (out.length === 2 && out[1]!.length === 44)
    out[1] = out[1]!.slice(0, 28) + toDigits(out[1]!.slice(28, 39)) + out[1]!.slice(39);
  return out;
}

/**
 * The document number is alphanumeric, so the parser's autocorrect cannot tell O from 0 there. When its check
 * digit fails, each single lookalike substitution is tried, and one is taken only when it is the only one that
 * satisfies the check digit. Check digits catch most misreads but cannot prove a guess right (a misread check
 * digit can make a wrong guess pass), so the field is marked `corrected` for the front desk to compare.
 */
function correctDocumentNumber(lines: string[], result: ParseResult): ParseResult | undefined {
  const check = result.details.find((d) => d.field === "documentNumberCheckDigit");
  const data = check?.ranges[1];
  if (check === undefined || check.valid || data === undefined) return undefined;
  const line = lines[data.line]!;
  const found: ParseResult[] = [];
  for (let i = data.start; i < data.end; i++) {
    for (const c of LOOKALIKES[line[i]!] ?? []) {
      const r = parse(
        lines.map((l, n) => (n === data.line ? line.slice(0, i) + c + line.slice(i + 1) : l)),
        { autocorrect: true },
      );
      if (r.details.find((d) => d.field === "documentNumberCheckDigit")?.valid === true) found.push(r);
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/** Our field names for the parser's, for `problems`. */
const FIELD_OF: Partial<Record<FieldName, string>> = {
  documentCode: "documentCode",
  documentNumber: "documentNumber",
  documentNumberCheckDigit: "documentNumber",
  lastName: "surname",
  firstName: "givenNames",
  nationality: "nationality",
  issuingState: "issuingState",
  birthDate: "birthDate",
  birthDateCheckDigit: "birthDate",
  sex: "sex",
  expirationDate: "expiryDate",
  expirationDateCheckDigit: "expiryDate",
  personalNumber: "personalNumber",
  personalNumberCheckDigit: "personalNumber",
  compositeCheckDigit: "composite",
};

/** ICAO 9303's code for specimen documents ("Utopia"); the parser's country list does not know it. */
const SPECIMEN_STATE = "UTO";

function toReading(result: ParseResult, lines: string[], opts: ReadOptions): MrzReading {
  const format = result.format === "TD1" ? "TD1" : "TD3";
  const problems: ScanProblem[] = [];
  const detail = (f: FieldName): Details | undefined => result.details.find((d) => d.field === f);
  const raw = (f: FieldName): string => {
    const d = detail(f);
    const r = d?.ranges[0];
    return r === undefined ? "" : lines[r.line]!.slice(r.start, r.end);
  };
  const trimmed = (f: FieldName): string => raw(f).replace(/<+$/, "").replace(/</g, " ").trim();

  for (const d of result.details) {
    if (d.valid || d.field === null) continue;
    if ((d.field === "nationality" || d.field === "issuingState") && raw(d.field) === SPECIMEN_STATE) continue;
    problems.push({
      field: FIELD_OF[d.field] ?? d.field,
      reason: d.field.endsWith("CheckDigit") ? "check digit does not match" : (d.error ?? "is invalid"),
    });
  }
  const failed = (field: string): boolean => problems.some((p) => p.field === field);
  const field = (name: string, value: string): ReadField => ({
    value: value === "" ? null : value,
    valid: value !== "" && !failed(name),
  });

  const [surname, ...given] = raw("lastName").split("<<");
  const birth = toIsoDate(raw("birthDate"), "birth", opts.today);
  const expiry = toIsoDate(raw("expirationDate"), "expiry", opts.today);
  if (birth === null && !failed("birthDate")) problems.push({ field: "birthDate", reason: "is not a calendar date" });
  if (expiry === null && !failed("expiryDate"))
    problems.push({ field: "expiryDate", reason: "is not a calendar date" });
  const sexChar = raw("sex");

  const reading: MrzReading = {
    format,
    valid: false,
    documentNumber: field(
      "documentNumber",
      detail("documentNumber")?.value ?? trimmed("documentNumber").replace(/ /g, ""),
    ),
    surname: field("surname", (surname ?? "").replace(/</g, " ").trim()),
    givenNames: field("givenNames", given.join(" ").replace(/</g, " ").trim()),
    nationality: field("nationality", trimmed("nationality")),
    issuingState: field("issuingState", trimmed("issuingState")),
    birthDate: { value: birth, valid: birth !== null && !failed("birthDate") },
    sex: field("sex", sexChar === "<" ? "X" : sexChar),
    expiryDate: { value: expiry, valid: expiry !== null && !failed("expiryDate") },
    tcIdentityNumber: tcNumber(format, lines, trimmed("issuingState"), problems),
    expired: false,
    problems,
  };
  reading.expired = reading.expiryDate.valid && reading.expiryDate.value! < opts.today;
  reading.valid = problems.length === 0;
  return reading;
}

function tcNumber(format: MrzFormat, lines: string[], issuingState: string, problems: ScanProblem[]): ReadField | null {
  if (issuingState !== "TUR") return null;
  const value =
    format === "TD1" ? lines[0]!.slice(15, 30).replace(/<+$/, "") : lines[1]!.slice(28, 42).replace(/<+$/, "");
  // a Turkish passport without an 11-digit personal number simply carries none
  if (format === "TD3" && !/^[0-9]{11}$/.test(value)) return null;
  const valid = isValidTcIdentityNumber(value);
  if (!valid)
    problems.push({ field: "tcIdentityNumber", reason: value === "" ? "is missing" : "check digits do not match" });
  return { value: value === "" ? null : value, valid };
}

/**
 * YYMMDD to YYYY-MM-DD, null when it is not a calendar date. Birth years take the latest century that does
 * not put the date after today; expiry years are 2000-2099.
 */
export function toIsoDate(yymmdd: string, kind: "birth" | "expiry", today: string): string | null {
  if (!/^[0-9]{6}$/.test(yymmdd)) return null;
  const yy = Number(yymmdd.slice(0, 2));
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(2000 + yy, month, 0)).getUTCDate()) return null;
  const iso = (year: number): string => `${year}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
  if (kind === "expiry") return iso(2000 + yy);
  const recent = iso(2000 + yy);
  if (recent <= today) return recent;
  // 29 February exists in 2000+yy exactly when it exists in 1900+yy, except for 2000 itself (1900 is no leap year)
  return yy === 0 && month === 2 && day === 29 ? null : iso(1900 + yy);
}
