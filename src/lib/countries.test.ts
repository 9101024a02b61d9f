import { describe, expect, it } from "vitest";
import { alpha2FromIcao } from "./countries.ts";

describe("alpha2FromIcao", () => {
  it("maps ISO alpha-3 and ICAO's own codes; specimen and organisation codes name no country", () => {
    expect(alpha2FromIcao("TUR")).toBe("TR");
    expect(alpha2FromIcao("DEU")).toBe("DE");
    expect(alpha2FromIcao("D<<")).toBe("DE");
    expect(alpha2FromIcao("GBR")).toBe("GB");
    expect(alpha2FromIcao("GBD")).toBe("GB");
    expect(alpha2FromIcao("NLD")).toBe("NL");
    expect(alpha2FromIcao("KOR")).toBe("KR");
    expect(alpha2FromIcao("PRK")).toBe("KP");
    expect(alpha2FromIcao("ZWE")).toBe("ZW");
    expect(alpha2FromIcao("UTO")).toBeUndefined();
    expect(alpha2FromIcao("XXA")).toBeUndefined();
    expect(alpha2FromIcao("UNO")).toBeUndefined();
  });
});
