import { describe, expect, it } from "vitest";
import { negotiateEncoding, requestEncoding } from "./compression.ts";
import { AppError } from "../errors.ts";

const pick = (accept: string | undefined, offered?: ("zstd" | "br" | "gzip")[]) =>
  negotiateEncoding(accept, offered)?.name;

describe("negotiateEncoding (RFC 9110 Accept-Encoding)", () => {
  it("takes the highest q-value, the server's order on ties, * for codings not named, and q=0 as a refusal", () => {
    expect(pick(undefined)).toBeUndefined();
    expect(pick("")).toBeUndefined();
    expect(pick("gzip, deflate")).toBe("gzip");
    expect(pick("gzip, br, zstd")).toBe("zstd");
    expect(pick("GZIP;Q=0.9, br;q=0.5")).toBe("gzip");
    expect(pick("*")).toBe("gzip");
    expect(pick("br, *")).toBe("br");
    expect(pick("*;q=0.1, gzip")).toBe("gzip");
    expect(pick("*, zstd;q=0")).toBe("gzip");
    expect(pick("*, gzip;q=0")).toBe("br");
    expect(pick("gzip;q=0")).toBeUndefined();
    expect(pick("identity, deflate")).toBeUndefined();
    expect(pick("gzip;q=abc")).toBeUndefined();
  });

  it("chooses among the codings an answer exists in (precompressed files)", () => {
    expect(pick("zstd, br, gzip", ["br", "gzip"])).toBe("br");
    expect(pick("gzip;q=0, br", ["gzip"])).toBeUndefined();
    expect(pick("gzip", [])).toBeUndefined();
  });
});

describe("requestEncoding (Content-Encoding of a request)", () => {
  it("reads none, identity and our codings; refuses others with 415", () => {
    expect(requestEncoding(undefined)).toBeUndefined();
    expect(requestEncoding("identity")).toBeUndefined();
    expect(requestEncoding(" GZIP ")?.name).toBe("gzip");
    expect(() => requestEncoding("deflate")).toThrow(AppError);
    try {
      requestEncoding("compress");
    } catch (err) {
      expect((err as AppError).code).toBe("unsupported_media_type");
    }
  });
});
