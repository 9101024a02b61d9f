import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { DurationSchema, StringValueSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  CodecSample_Mode,
  CodecSampleSchema,
  Color,
  ColorSchema,
  SearchThingsRequestSchema,
  ThingSchema,
} from "../../test/gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { AppError } from "../errors.ts";
import { enumPrefix, parse, render, shortEnumName } from "./codec.ts";

/** The violations parse reports for `json` (fails the test when it parses). */
function violations(desc: DescMessage, json: unknown): Record<string, string> {
  try {
    parse(desc, json);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("invalid_argument");
    return Object.fromEntries((err as AppError).details.map((d) => [d.field, d.reason]));
  }
  throw new Error("expected invalid_argument");
}

/** JSON -> message -> binary -> message -> JSON: what a REST call echoed by an RPC would answer. */
function roundTrip(desc: DescMessage, json: unknown): unknown {
  return render(desc, fromBinary(desc, toBinary(desc, parse(desc, json))));
}

describe("enum names", () => {
  it("derives the UPPER_SNAKE prefix buf lint requires from the enum's own name", () => {
    expect(enumPrefix({ name: "ReservationStatus" })).toBe("RESERVATION_STATUS_");
    expect(enumPrefix({ name: "Color" })).toBe("COLOR_");
    expect(enumPrefix({ name: "URLKind" })).toBe("URL_KIND_");
    expect(enumPrefix({ name: "Http2Mode" })).toBe("HTTP2_MODE_");
  });

  it("strips the prefix and renders the zero value as null", () => {
    expect(shortEnumName(ColorSchema, Color.DEEP_BLUE)).toBe("DEEP_BLUE");
    expect(shortEnumName(ColorSchema, Color.UNSPECIFIED)).toBeNull();
    expect(shortEnumName(ColorSchema, 99)).toBeNull();
  });
});

describe("render", () => {
  it("emits every field: defaults for implicit ones, null for unset optional, message, wrapper and oneof fields", () => {
    expect(render(CodecSampleSchema, create(CodecSampleSchema))).toEqual({
      bigUnsigned: 0,
      small: 0,
      ratio: 0,
      weight: 0,
      blob: "",
      total: 0,
      attributes: null,
      anything: null,
      list: null,
      maybeAmount: null,
      maybeBlob: null,
      maybeFlag: null,
      maybeCount: null,
      labels: [],
      times: [],
      byNumber: {},
      things: {},
      colors: {},
      roomNumber: null,
      roomRef: null,
      mode: null,
      optionalAmount: null,
      optionalColor: null,
      amounts: [],
      chunks: [],
      label: "",
      elapsed: null,
    });
  });

  it("renders set values: int64 as numbers, wrappers unwrapped, bytes as base64, nested enums short, oneof member", () => {
    const sample = create(CodecSampleSchema, {
      total: 9007199254740991n,
      amounts: [-9007199254740991n, 0n, 5n],
      maybeAmount: 0n, // set to zero is not unset
      maybeFlag: false,
      maybeBlob: new Uint8Array([1, 2, 3]),
      blob: new Uint8Array([255]),
      chunks: [new Uint8Array([0])],
      labels: [create(StringValueSchema, { value: "a" })],
      mode: CodecSample_Mode.FAST,
      optionalColor: Color.RED,
      optionalAmount: 7n,
      colors: { true: Color.DEEP_BLUE },
      byNumber: { 3: "three" },
      target: { case: "roomRef", value: { id: "101" } },
      attributes: { floor: 2, tags: ["quiet"] },
      ratio: Number.NaN,
      displayName: "shown",
      elapsed: create(DurationSchema, { seconds: 90n }),
    });
    expect(render(CodecSampleSchema, sample)).toMatchObject({
      total: 9007199254740991,
      amounts: [-9007199254740991, 0, 5],
      maybeAmount: 0,
      maybeFlag: false,
      maybeBlob: "AQID",
      blob: "/w==",
      chunks: ["AA=="],
      labels: ["a"],
      mode: "FAST",
      optionalColor: "RED",
      optionalAmount: 7,
      colors: { true: "DEEP_BLUE" },
      byNumber: { 3: "three" },
      roomNumber: null,
      roomRef: { id: "101" },
      attributes: { floor: 2, tags: ["quiet"] },
      ratio: "NaN",
      label: "shown",
      elapsed: "90s",
    });
  });

  it("renders an init shape (what an RPC returns) exactly like the message create() makes of it", () => {
    const shapes = [
      {},
      { total: 5n, small: 3, maybeFlag: false, mode: CodecSample_Mode.FAST, labels: [{ value: "a" }] },
      {
        amounts: [1n, 2n],
        blob: new Uint8Array([7]),
        colors: { a: Color.RED },
        target: { case: "roomNumber" as const, value: "12" },
        elapsed: { seconds: 5n },
        attributes: { a: 1 },
      },
    ];
    for (const init of shapes) {
      expect(render(CodecSampleSchema, init)).toEqual(render(CodecSampleSchema, create(CodecSampleSchema, init)));
    }
    const thing = { id: "t", tags: ["x"], createdAt: { seconds: 5n } };
    expect(render(ThingSchema, thing)).toEqual(render(ThingSchema, create(ThingSchema, thing)));
  });

  it("refuses (internal) to render an int64 JSON numbers cannot carry exactly", () => {
    for (const sample of [
      { total: 9007199254740992n },
      { amounts: [1n, -9007199254740992n] },
      { maybeAmount: 2n ** 60n },
    ]) {
      expect(() => render(CodecSampleSchema, create(CodecSampleSchema, sample))).toThrow(
        expect.objectContaining({ code: "internal" }),
      );
    }
  });

  it("renders timestamps in UTC with exactly three fraction digits, truncated", () => {
    const at = (seconds: bigint, nanos: number) =>
      (render(ThingSchema, create(ThingSchema, { createdAt: { seconds, nanos } })) as { createdAt: string }).createdAt;
    expect(at(1795167000n, 0)).toBe("2026-11-20T09:30:00.000Z");
    expect(at(1795167000n, 123_999_999)).toBe("2026-11-20T09:30:00.123Z");
    expect(at(1795167000n, 5_000)).toBe("2026-11-20T09:30:00.000Z");
    expect(at(-1n, 500_000_000)).toBe("1969-12-31T23:59:59.500Z");
    expect(
      render(ThingSchema, create(ThingSchema, { createdAt: timestampFromDate(new Date("2026-01-02T03:04:05.678Z")) })),
    ).toMatchObject({ createdAt: "2026-01-02T03:04:05.678Z" });
  });
});

describe("parse", () => {
  it("round-trips every kind of field", () => {
    const json = {
      bigUnsigned: 4294967295,
      small: -2147483648,
      ratio: 0.5,
      weight: 1.5,
      blob: "AQID",
      total: 9007199254740991,
      attributes: { a: { b: [1, "x", null, true] } },
      anything: [1, { k: "v" }],
      list: ["x", 2],
      maybeAmount: -12,
      maybeBlob: "",
      maybeFlag: true,
      maybeCount: 4000000000,
      labels: ["a", "b"],
      times: ["2026-11-22T12:30:00+03:00", "2026-11-22T09:30:00.123456789Z"],
      byNumber: { "-1": "minus one", 7: "seven" },
      things: { a: { id: "t", amountMinor: 5, color: "COLOR_RED" } },
      colors: { false: "DEEP_BLUE" },
      roomNumber: "101",
      mode: "MODE_FAST",
      optionalAmount: 0,
      optionalColor: "RED",
      amounts: [1, -2],
      chunks: ["AA==", "_-8"], // base64url is accepted too
      label: "shown",
      elapsed: "1.5s",
    };
    const out = roundTrip(CodecSampleSchema, json) as Record<string, unknown>;
    expect(out).toMatchObject({
      ...json,
      times: ["2026-11-22T09:30:00.000Z", "2026-11-22T09:30:00.123Z"],
      byNumber: { "-1": "minus one", 7: "seven" },
      things: { a: { id: "t", amountMinor: 5, color: "RED", createdAt: null, note: null } },
      mode: "FAST",
      chunks: ["AA==", "/+8="],
      elapsed: "1.500s",
      roomRef: null,
    });
  });

  it("accepts proto field names as well as JSON names, and treats null as unset", () => {
    const msg = parse(CodecSampleSchema, {
      big_unsigned: 1,
      display_name: "x",
      maybeAmount: null,
      optionalColor: null,
      things: null,
    });
    expect(msg.bigUnsigned).toBe(1);
    expect(msg.displayName).toBe("x");
    expect(msg.maybeAmount).toBeUndefined();
    expect(msg.optionalColor).toBeUndefined();
    expect(parse(CodecSampleSchema, null)).toEqual(create(CodecSampleSchema));
  });

  it("keeps sub-millisecond precision and applies the offset", () => {
    const msg = parse(CodecSampleSchema, {
      times: ["2026-11-22T09:30:00.123456789Z", "0001-01-01T00:00:00Z", "2026-11-22T00:00:00-05:30"],
    });
    expect(msg.times.map((t) => [t.seconds, t.nanos])).toEqual([
      [1795339800n, 123456789],
      [-62135596800n, 0],
      [1795325400n, 0], // 05:30Z
    ]);
  });

  it("reports each problem with its field path", () => {
    expect(
      violations(CodecSampleSchema, {
        bigUnsigned: -1,
        small: 2147483648,
        total: 9007199254740992,
        amounts: [1, "2", 3.5],
        blob: "not base64!",
        mode: "SLOW",
        optionalColor: 2,
        times: ["2026-11-22T09:30:00Z", "2026-02-30T00:00:00Z", "yesterday"],
        byNumber: { x: "?" },
        things: { a: { amountMinor: "12", parent: { id: 5 }, nope: true } },
        labels: [null],
        attributes: [1],
        weight: 1e39,
        unknown: 1,
      }),
    ).toEqual({
      bigUnsigned: "must be an integer from 0 to 4294967295",
      small: "must be an integer within the 32-bit range",
      total: "must be an integer from 0 to 2^53-1",
      "amounts[1]": "must be an integer",
      "amounts[2]": "must be an integer",
      blob: "must be base64 text",
      mode: "must be one of FAST",
      optionalColor: "must be one of RED, DEEP_BLUE",
      "times[1]": "must be an ISO 8601 timestamp such as 2026-11-22T09:30:00.000Z",
      "times[2]": "must be an ISO 8601 timestamp such as 2026-11-22T09:30:00.000Z",
      "byNumber.x": "key must be an integer from -2147483648 to 2147483647",
      "things.a.amountMinor": "must be an integer",
      "things.a.parent.id": "must be a string",
      "things.a.nope": "is not a known field",
      "labels[0]": "must not be null",
      attributes: "must be an object",
      weight: "must be a number within the 32-bit float range",
      unknown: "is not a known field",
    });
  });

  it("refuses int64 beyond 2^53-1 and numeric strings", () => {
    expect(violations(ThingSchema, JSON.parse(`{"amountMinor":9007199254740993}`))).toEqual({
      amountMinor: "must be an integer within ±(2^53-1)",
    });
    expect(violations(ThingSchema, { amountMinor: -9007199254740992 })).toEqual({
      amountMinor: "must be an integer within ±(2^53-1)",
    });
    expect(violations(ThingSchema, { amountMinor: "5" })).toEqual({ amountMinor: "must be an integer" });
    expect(parse(ThingSchema, { amountMinor: -9007199254740991 }).amountMinor).toBe(-9007199254740991n);
  });

  it("takes enum names with or without prefix, never numbers or the unspecified value", () => {
    expect(parse(ThingSchema, { color: "DEEP_BLUE", palette: ["RED", "COLOR_DEEP_BLUE"] })).toMatchObject({
      color: Color.DEEP_BLUE,
      palette: [Color.RED, Color.DEEP_BLUE],
    });
    expect(violations(ThingSchema, { color: "UNSPECIFIED", palette: [1, "COLOR_UNSPECIFIED"] })).toEqual({
      color: "must be one of RED, DEEP_BLUE",
      "palette[0]": "must be one of RED, DEEP_BLUE",
      "palette[1]": "must be one of RED, DEEP_BLUE",
    });
  });

  it("refuses two members of one oneof", () => {
    expect(violations(CodecSampleSchema, { roomNumber: "1", roomRef: { id: "2" } })).toEqual({
      roomRef: "only one of roomNumber, roomRef may be set",
    });
  });

  it("refuses a body that is not an object, naming no field", () => {
    expect(violations(SearchThingsRequestSchema, [1])).toEqual({ "": "must be an object" });
    expect(violations(SearchThingsRequestSchema, "x")).toEqual({ "": "must be an object" });
  });

  it("reports violations passed in from query parameters together with the body's", () => {
    try {
      parse(ThingSchema, { count: "x" }, [{ field: "limit", reason: "must be an integer" }]);
      expect.unreachable();
    } catch (err) {
      expect((err as AppError).details.map((d) => d.field)).toEqual(["limit", "count"]);
      expect((err as AppError).message).toBe("Invalid request: limit must be an integer; count must be an integer");
    }
  });
});
