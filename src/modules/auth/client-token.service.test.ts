import { describe, expect, it } from "vitest";
import { AppError } from "../../errors.ts";
import { parseBasic } from "./client-token.service.ts";

const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");

describe("parseBasic (RFC 6749 section 2.3.1)", () => {
  it("form-decodes id and secret after base64", () => {
    expect(parseBasic(`Basic ${b64("cli_1:s%3Acret+x%2By")}`)).toEqual({ id: "cli_1", secret: "s:cret x+y" });
    expect(parseBasic(`basic ${b64("a%20b:c:d")}`)).toEqual({ id: "a b", secret: "c:d" });
  });

  it("is undefined without a header", () => {
    expect(parseBasic(null)).toBeUndefined();
    expect(parseBasic("")).toBeUndefined();
  });

  it("refuses other schemes and malformed credentials as invalid_client", () => {
    for (const header of ["Bearer x", "Basic", "Basic ***", `Basic ${b64("nocolon")}`, `Basic ${b64("a:%E0%A4%A")}`]) {
      let thrown: unknown;
      try {
        parseBasic(header);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect((thrown as AppError).headers["x-oauth-error"]).toBe("invalid_client");
      expect((thrown as AppError).httpStatus).toBe(401);
    }
  });
});
