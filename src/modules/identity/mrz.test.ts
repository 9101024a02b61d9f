import { describe, expect, it } from "vitest";
import { badPassportMrz, checkDigit, passportMrz, tcKimlikMrz } from "../../../test/fixtures/identity/make-images.ts";
import { findMrzLines, fitWidth, readMrz, toIsoDate } from "./mrz.ts";

const today = "2026-05-01";

describe("readMrz on TD3 (passport)", () => {
  it("reads the ICAO 9303 specimen with every field valid", () => {
    const r = readMrz(passportMrz, { today });
    expect(r).toMatchObject({
      format: "TD3",
      valid: true,
      documentNumber: { value: "L898902C3", valid: true },
      surname: { value: "ERIKSSON", valid: true },
      givenNames: { value: "ANNA MARIA", valid: true },
      nationality: { value: "UTO", valid: true },
      issuingState: { value: "UTO", valid: true },
      birthDate: { value: "1974-08-12", valid: true },
      sex: { value: "F", valid: true },
      expiryDate: { value: "2012-04-15", valid: true },
      tcIdentityNumber: null,
      expired: true,
      problems: [],
    });
  });

  it("keeps the value but flags the field when its check digit fails", () => {
    const r = readMrz(badPassportMrz, { today });
    expect(r.valid).toBe(false);
    expect(r.documentNumber).toEqual({ value: "L898902C3", valid: false });
    expect(r.birthDate.valid).toBe(true);
    expect(r.problems).toEqual([
      { field: "documentNumber", reason: "check digit does not match" },
      { field: "composite", reason: "check digit does not match" },
    ]);
  });

  it("flags a wrong birth date check digit on the birth date", () => {
    const line2 = `${passportMrz[1]!.slice(0, 19)}3${passportMrz[1]!.slice(20)}`;
    const r = readMrz([passportMrz[0]!, line2], { today });
    expect(r.birthDate).toEqual({ value: "1974-08-12", valid: false });
    expect(r.problems.map((p) => p.field)).toEqual(["birthDate", "composite"]);
  });

  it("corrects OCR's O for 0 in the alphabetic nationality and in the numeric dates", () => {
    const ocr = passportMrz[1]!.replace("UTO74", "UT074").replace("120415", "12O415");
    const r = readMrz([passportMrz[0]!, ocr], { today });
    expect(r.valid).toBe(true);
    expect(r.nationality.value).toBe("UTO");
    expect(r.expiryDate.value).toBe("2012-04-15");
  });

  it("takes a lookalike swap in the document number only when it is the one swap the check digit accepts", () => {
    const card = tcKimlikMrz();
    // OCR read the card's B as 8: of all single swaps only 8 -> B satisfies the check digit
    const read = [card[0]!.replace("A01B23456", "A01823456"), card[1]!, card[2]!];
    expect(readMrz(read, { today }).documentNumber).toEqual({ value: "A01B23456", valid: true, corrected: true });
    // B for 8 in the passport number: three swaps satisfy the check digit, so nothing is guessed
    const passport = [passportMrz[0]!, passportMrz[1]!.replace("L898902C3", "LB98902C3")];
    expect(readMrz(passport, { today }).documentNumber).toEqual({ value: "LB98902C3", valid: false });
    // the bad-check specimen stays invalid and uncorrected
    expect(readMrz(badPassportMrz, { today }).documentNumber).toEqual({ value: "L898902C3", valid: false });
    expect(readMrz(passportMrz, { today }).documentNumber.corrected).toBeUndefined();
  });

  it("reads the TC identity number from a Turkish passport's personal number", () => {
    const personal = "10000000146<<<";
    const head = `U12345678${checkDigit("U12345678")}TUR850101${checkDigit("850101")}M300101${checkDigit("300101")}`;
    const body = `${head}${personal}${checkDigit(personal)}`;
    const composite = checkDigit(body.slice(0, 10) + body.slice(13, 20) + body.slice(21, 43));
    const r = readMrz(["P<TURDEMIR<<ALI".padEnd(44, "<"), body + composite], { today });
    expect(r.problems).toEqual([]);
    expect(r.tcIdentityNumber).toEqual({ value: "10000000146", valid: true });
    expect(r.sex.value).toBe("M");
    expect(r.birthDate.value).toBe("1985-01-01");
  });
});

describe("readMrz on TD1 (TC kimlik card)", () => {
  it("reads the card and validates the TC identity number in the optional data", () => {
    const r = readMrz(tcKimlikMrz(), { today });
    expect(r).toMatchObject({
      format: "TD1",
      valid: true,
      documentNumber: { value: "A01B23456", valid: true },
      surname: { value: "YILMAZ", valid: true },
      givenNames: { value: "AYSE GUL", valid: true },
      nationality: { value: "TUR", valid: true },
      birthDate: { value: "1990-02-15", valid: true },
      expiryDate: { value: "2032-06-01", valid: true },
      tcIdentityNumber: { value: "10000000146", valid: true },
      expired: false,
    });
  });

  it("flags a TC identity number whose check digits fail", () => {
    const lines = tcKimlikMrz();
    lines[0] = lines[0]!.replace("10000000146", "10000000147");
    const r = readMrz(lines, { today });
    expect(r.tcIdentityNumber).toEqual({ value: "10000000147", valid: false });
    expect(r.problems).toContainEqual({ field: "tcIdentityNumber", reason: "check digits do not match" });
    expect(r.valid).toBe(false);
  });

  it("maps letters OCR read into the TC identity number back to digits", () => {
    const lines = tcKimlikMrz();
    lines[0] = lines[0]!.replace("10000000146", "1OOOOOOO146");
    const r = readMrz(lines, { today });
    expect(r.tcIdentityNumber).toEqual({ value: "10000000146", valid: true });
    expect(r.valid).toBe(true);
  });
});

describe("findMrzLines", () => {
  it("finds the MRZ below other text and mends miscounted fillers", () => {
    const ocr = [
      "PASSPORT UTOPIA",
      "SURNAME ERIKSSON",
      "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<",
      "L898902C36UTO7408122F1204159ZE184226B<<<<<<10",
      "",
    ].join("\n");
    expect(findMrzLines(ocr, "TD3")).toEqual(passportMrz);
  });

  it("ignores spaces OCR puts between characters", () => {
    const ocr = tcKimlikMrz()
      .map((l) => l.replace(/(.{5})/g, "$1 "))
      .join("\n");
    expect(findMrzLines(ocr, "TD1")).toEqual(tcKimlikMrz());
  });

  it("finds nothing in text without an MRZ of the asked format", () => {
    expect(findMrzLines("TURKIYE CUMHURIYETI\nKIMLIK KARTI\n", "TD1")).toBeUndefined();
    expect(findMrzLines(passportMrz.join("\n"), "TD1")).toBeUndefined();
  });

  it("fitWidth pads and trims in the longest filler run", () => {
    expect(fitWidth("AB<<CD<", 8)).toBe("AB<<<CD<");
    expect(fitWidth("AB<<<CD<", 7)).toBe("AB<<CD<");
    expect(fitWidth("ABCDEF", 7)).toBe("ABCDEF<");
  });
});

describe("toIsoDate", () => {
  it("puts a birth year in the latest century that is not in the future", () => {
    expect(toIsoDate("740812", "birth", today)).toBe("1974-08-12");
    expect(toIsoDate("260501", "birth", today)).toBe("2026-05-01");
    expect(toIsoDate("260502", "birth", today)).toBe("1926-05-02");
  });

  it("reads expiry years as 20YY", () => {
    expect(toIsoDate("120415", "expiry", today)).toBe("2012-04-15");
    expect(toIsoDate("991231", "expiry", today)).toBe("2099-12-31");
  });

  it("refuses dates that do not exist", () => {
    expect(toIsoDate("741312", "birth", today)).toBeNull();
    expect(toIsoDate("740230", "birth", today)).toBeNull();
    expect(toIsoDate("230229", "expiry", today)).toBeNull();
    expect(toIsoDate("240229", "expiry", today)).toBe("2024-02-29");
    expect(toIsoDate("74O812", "birth", today)).toBeNull();
  });
});
