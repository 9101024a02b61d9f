import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { maskSensitive, nameWords, normaliseDocumentNumber } from "./fields.ts";
import { createGuestVault } from "./vault.ts";

describe("guest vault", () => {
  const a = randomBytes(32);
  const b = randomBytes(32);

  it("seals per row: another row id or a changed byte does not open", () => {
    const vault = createGuestVault(a);
    const sealed = vault.seal('{"documentNumber":"U1"}', "row-1");
    expect(vault.open(sealed, "row-1")).toBe('{"documentNumber":"U1"}');
    expect(() => vault.open(sealed, "row-2")).toThrow();
    const parts = sealed.split(".");
    parts[4] = parts[4]!.slice(0, -2) + (parts[4]!.endsWith("AA") ? "BB" : "AA");
    expect(() => vault.open(parts.join("."), "row-1")).toThrow();
  });

  it("names its key: a rotated vault opens old values and searches under both keys", () => {
    const old = createGuestVault(a);
    const rotated = createGuestVault(b, [a]);
    const sealed = old.seal("x", "row");
    expect(rotated.keyIdOf(sealed)).toBe(old.keyId);
    expect(rotated.open(sealed, "row")).toBe("x");
    expect(rotated.hashes("U1")).toEqual([createGuestVault(b).hash("U1"), old.hash("U1")]);
    expect(() => createGuestVault(b).open(sealed, "row")).toThrow(/not configured/);
  });
});

describe("guest fields", () => {
  it("normalises document numbers and names", () => {
    expect(normaliseDocumentNumber(" u12-345 678 ")).toBe("U12345678");
    expect(nameWords("AYŞE  Yılmaz-İnce")).toEqual(["ayse", "yilmaz", "ince"]);
  });

  it("masks so a value can be recognised, not read", () => {
    expect(
      maskSensitive({
        documentNumber: "12345678946",
        birthDate: "1990-01-01",
        email: "ayse@example.com",
        phone: "+905321234567",
        address: "x",
        notes: "",
      }),
    ).toEqual({
      documentNumber: "12*******46",
      birthDate: "****-**-**",
      email: "a***@example.com",
      phone: "+90********67",
      address: "***",
      notes: "",
    });
  });
});
