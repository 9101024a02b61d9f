import { AppError, invalidField } from "../../errors.ts";
import { alpha2FromIcao } from "../../lib/countries.ts";
import { isUuid } from "../../lib/ids.ts";
import type { ScannedPerson } from "../guests/index.ts";
import type { MrzReading } from "./mrz.ts";

/** A scan's request to save the person read to a room line; undefined when it asks for no save. */
export function saveRequest(saveToRoomLine: string, confirmed: boolean): string | undefined {
  if (saveToRoomLine === "") return undefined;
  if (!confirmed)
    throw invalidField("confirmed", "must be true to save the read fields (compare them with the document)");
  // a malformed id names no line of the property
  if (!isUuid(saveToRoomLine)) throw new AppError("not_found", "Room line not found.");
  return saveToRoomLine;
}

/** "AYSE GUL" as "Ayse Gul": an MRZ name in the case a guest profile shows. */
function nameCase(mrzName: string): string {
  return mrzName
    .toLowerCase()
    .split(" ")
    .filter((w) => w !== "")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(" ");
}

/**
 * The person a read names, as guest fields: only a read whose every check held (else 422 validation_failed with the
 * failures, the first naming the field). A TC_KIMLIK card's document number is the TC identity number (the
 * profile's document for a Turkish identity card); a passport's is the passport number.
 */
export function scannedPerson(documentType: "TC_KIMLIK" | "PASSPORT", r: MrzReading): ScannedPerson {
  if (!r.valid || r.problems.length > 0) {
    const first = r.problems[0];
    throw new AppError(
      "validation_failed",
      `The read fields fail their checks (${first?.field ?? "composite"}: ${first?.reason ?? "invalid"}); nothing was saved.`,
      { details: r.problems },
    );
  }
  const number = documentType === "TC_KIMLIK" ? r.tcIdentityNumber?.value : r.documentNumber.value;
  if (number === null || number === undefined)
    throw invalidField(
      documentType === "TC_KIMLIK" ? "tcIdentityNumber" : "documentNumber",
      "is missing",
      "validation_failed",
    );
  return {
    givenName: nameCase(r.givenNames.value ?? ""),
    familyName: nameCase(r.surname.value ?? ""),
    nationality: alpha2FromIcao(r.nationality.value ?? "") ?? "",
    birthDate: r.birthDate.value ?? "",
    documentType,
    documentNumber: number,
    documentCountry: alpha2FromIcao(r.issuingState.value ?? "") ?? "",
    documentExpiry: r.expiryDate.value ?? "",
  };
}
