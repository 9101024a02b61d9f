import { describe, expect, it } from "vitest";
import { AppError } from "../../errors.ts";
import { validateBuyer } from "./buyer.ts";
import { isValidTckn, isValidVkn, PLACEHOLDER_TCKN } from "./tax-ids.ts";

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("validation_failed");
    return (e as AppError).details[0]?.field;
  }
  return undefined;
}

describe("TCKN and VKN", () => {
  it("accepts TCKNs whose two check digits hold and GİB's placeholder", () => {
    expect(isValidTckn("10000000146")).toBe(true);
    expect(isValidTckn(PLACEHOLDER_TCKN)).toBe(true);
    expect(isValidTckn("10000000147")).toBe(false); // last digit wrong
    expect(isValidTckn("10000000156")).toBe(false); // tenth digit wrong
    expect(isValidTckn("01000000146")).toBe(false); // leading zero
    expect(isValidTckn("1000000014")).toBe(false);
    expect(isValidTckn("1000000014a")).toBe(false);
    expect(isValidTckn("22222222222")).toBe(false);
  });
  it("accepts VKNs whose check digit holds", () => {
    expect(isValidVkn("1234567890")).toBe(true);
    expect(isValidVkn("9876543217")).toBe(true);
    expect(isValidVkn("0123456789")).toBe(true);
    expect(isValidVkn("1234567891")).toBe(false);
    expect(isValidVkn("123456789")).toBe(false);
    expect(isValidVkn("12345678901")).toBe(false);
  });
});

describe("buyers", () => {
  const address = {
    street: "Atatürk Bulvarı 5",
    district: "Çankaya",
    city: "Ankara",
    postalZone: "",
    countryCode: "tr",
  };
  it("defaults to the unknown consumer and the placeholder TCKN", () => {
    expect(validateBuyer(undefined)).toMatchObject({ kind: "PERSON", tckn: PLACEHOLDER_TCKN });
    expect(validateBuyer({ kind: "PERSON", firstName: "John", familyName: "Smith" })).toMatchObject({
      tckn: PLACEHOLDER_TCKN,
      address: { countryCode: "TR" },
    });
  });
  it("names the field of a bad person or company", () => {
    expect(fieldOf(() => validateBuyer({ kind: "PERSON", tckn: "12345678901", firstName: "A", familyName: "B" }))).toBe(
      "buyer.tckn",
    );
    expect(fieldOf(() => validateBuyer({ kind: "PERSON", tckn: "10000000146", firstName: " ", familyName: "B" }))).toBe(
      "buyer.firstName",
    );
    const company = {
      kind: "COMPANY" as const,
      vkn: "1234567890",
      title: "Güneş Turizm",
      taxOffice: "Çankaya",
      address,
      eFatura: true,
    };
    expect(validateBuyer(company)).toMatchObject({ vkn: "1234567890", address: { countryCode: "TR" } });
    expect(fieldOf(() => validateBuyer({ ...company, vkn: "1234567891" }))).toBe("buyer.vkn");
    expect(fieldOf(() => validateBuyer({ ...company, taxOffice: "" }))).toBe("buyer.taxOffice");
    expect(fieldOf(() => validateBuyer({ ...company, title: "" }))).toBe("buyer.title");
    expect(fieldOf(() => validateBuyer({ ...company, address: { ...address, street: "" } }))).toBe(
      "buyer.address.street",
    );
    expect(fieldOf(() => validateBuyer({ ...company, address: { ...address, countryCode: "T1" } }))).toBe(
      "buyer.address.countryCode",
    );
  });
});
