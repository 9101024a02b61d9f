import { describe, expect, it } from "vitest";
import { keyPageOf, keyPageResult } from "./page.ts";

const cursorOf = (key: unknown): string => Buffer.from(JSON.stringify(key)).toString("base64url");
const id = "0190f2a4-6b1e-7c3d-9a8b-1c2d3e4f5a6b";

describe("keyPageOf", () => {
  it("reads back the key of keyPageResult's cursor, element by element", () => {
    const rows = [
      { day: "2027-01-02", name: "Ada", id },
      { day: "2027-01-03", name: "Bo", id },
    ];
    const { nextCursor } = keyPageResult(rows, 1, (r) => [r.day, r.name, r.id]);
    expect(keyPageOf({ cursor: nextCursor, limit: 1 }, 50, ["date", "text", "uuid"])).toEqual({
      limit: 1,
      after: ["2027-01-02", "Ada", id],
    });
    expect(keyPageOf({}, 50, ["text"])).toEqual({ limit: 50, after: undefined });
  });

  it("refuses a cursor whose key does not fit the list's key (400 on cursor), not only a malformed one", () => {
    const refused = (cursor: string) => () => keyPageOf({ cursor }, 50, ["date", "text", "uuid"]);
    const cursorError = expect.objectContaining({
      code: "invalid_argument",
      details: [expect.objectContaining({ field: "cursor" })],
    });
    for (const key of [
      ["2027-02-30", "Ada", id],
      ["", "Ada", id],
      ["2027-01-02", "Ada", "not-an-id"],
      ["2027-01-02", 7, id],
      ["2027-01-02", "Ada"],
      { day: "2027-01-02" },
    ])
      expect(refused(cursorOf(key))).toThrow(cursorError);
    expect(refused("%%%")).toThrow(cursorError);
  });

  it("checks the limit against the list's maximum", () => {
    expect(() => keyPageOf({ limit: 51 }, 50, ["text"])).toThrow(expect.objectContaining({ code: "invalid_argument" }));
  });
});
