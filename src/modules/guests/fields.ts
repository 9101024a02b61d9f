import { AppError, type FieldViolation } from "../../errors.ts";
import { isCalendarDate, badDateReason } from "../../lib/dates.ts";
import { isValidTcIdentityNumber } from "../../lib/tc-number.ts";

/** A guest's own fields as the API takes and gives them; "" is "none". */
export interface GuestFields {
  givenName: string;
  familyName: string;
  nationality: string;
  birthDate: string;
  documentType: "" | "TC_KIMLIK" | "PASSPORT";
  documentNumber: string;
  documentCountry: string;
  documentExpiry: string;
  email: string;
  phone: string;
  address: string;
  language: string;
  notes: string;
}

/** The fields sealed at rest, read in full only with guests.read_sensitive. */
export const sensitiveFields = ["documentNumber", "birthDate", "email", "phone", "address", "notes"] as const;
type SensitiveField = (typeof sensitiveFields)[number];
export type Sensitive = Pick<GuestFields, SensitiveField>;

export const emptyGuestFields: GuestFields = {
  givenName: "",
  familyName: "",
  nationality: "",
  birthDate: "",
  documentType: "",
  documentNumber: "",
  documentCountry: "",
  documentExpiry: "",
  email: "",
  phone: "",
  address: "",
  language: "",
  notes: "",
};

/** A document number as compared and hashed: no spaces or dashes, letters upper-cased. */
export function normaliseDocumentNumber(value: string): string {
  return value.replace(/[\s-]/g, "").toUpperCase();
}

/** The words of a name as searched: lower case (Turkish dotless i as i), no accents, letters and digits only. */
export function nameWords(text: string): string[] {
  return text
    .replace(/ı/g, "i")
    .replace(/İ/g, "I")
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "");
}

const country = /^[A-Z]{2}$/;
const email = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const phone = /^\+[1-9][0-9]{6,14}$/;
const language = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const maxLength: Partial<Record<keyof GuestFields, number>> = {
  givenName: 100,
  familyName: 100,
  email: 254,
  address: 500,
  notes: 2000,
};

/**
 * The problems of a guest's fields, each naming its field; the reasons never repeat the value (it is personal
 * data and error messages are logged).
 */
function guestProblems(g: GuestFields, today: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const bad = (field: string, reason: string) => out.push({ field, reason });
  if (g.givenName.trim() === "") bad("givenName", "is required");
  if (g.familyName.trim() === "") bad("familyName", "is required");
  for (const [field, max] of Object.entries(maxLength))
    if (g[field as keyof GuestFields].length > max) bad(field, `at most ${max} characters`);
  if (g.nationality !== "" && !country.test(g.nationality)) bad("nationality", "must be an ISO 3166 alpha-2 code");
  if (g.documentCountry !== "" && !country.test(g.documentCountry))
    bad("documentCountry", "must be an ISO 3166 alpha-2 code");
  if (g.birthDate !== "") {
    if (!isCalendarDate(g.birthDate)) bad("birthDate", badDateReason);
    else if (g.birthDate > today) bad("birthDate", "must not be in the future");
  }
  if (g.documentExpiry !== "" && !isCalendarDate(g.documentExpiry)) bad("documentExpiry", badDateReason);
  if (!["", "TC_KIMLIK", "PASSPORT"].includes(g.documentType)) bad("documentType", "must be TC_KIMLIK or PASSPORT");
  const number = normaliseDocumentNumber(g.documentNumber);
  if (number === "" && g.documentType !== "") bad("documentNumber", "is required with documentType");
  if (number !== "" && g.documentType === "") bad("documentType", "is required with documentNumber");
  if (number !== "" && g.documentType === "TC_KIMLIK" && !isValidTcIdentityNumber(number))
    bad("documentNumber", "is not a valid TC identity number (11 digits, check digits)");
  if (number !== "" && g.documentType === "PASSPORT" && !/^[A-Z0-9]{5,20}$/.test(number))
    bad("documentNumber", "must be 5-20 letters or digits");
  if (g.email !== "" && !email.test(g.email)) bad("email", "must be an e-mail address");
  if (g.phone !== "" && !phone.test(g.phone)) bad("phone", "must be an E.164 number (+ and 7-15 digits)");
  if (g.language !== "" && !language.test(g.language)) bad("language", "must be a BCP 47 language tag");
  return out;
}

export function validateGuest(g: GuestFields, today: string): void {
  const problems = guestProblems(g, today);
  if (problems.length > 0)
    throw new AppError("invalid_argument", problems.map((p) => `${p.field}: ${p.reason}`).join("; "), {
      details: problems,
    });
}

/** The masked form of the sensitive fields: enough to recognise a value, never to read it. */
export function maskSensitive(s: Sensitive): Sensitive {
  const middle = (v: string, head: number, tail: number) =>
    v.length <= head + tail
      ? "*".repeat(v.length)
      : v.slice(0, head) + "*".repeat(v.length - head - tail) + v.slice(-tail);
  const at = s.email.lastIndexOf("@");
  return {
    documentNumber: middle(s.documentNumber, 2, 2),
    birthDate: s.birthDate === "" ? "" : "****-**-**",
    email: s.email === "" ? "" : `${s.email.slice(0, 1)}***${at > 0 ? s.email.slice(at) : ""}`,
    phone: middle(s.phone, 3, 2),
    address: s.address === "" ? "" : "***",
    notes: s.notes === "" ? "" : "***",
  };
}
