import { describe, expect, it } from "vitest";
import { create, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { DurationSchema, StringValueSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  GetAriResponseSchema,
  ListReservationsResponseSchema,
} from "../../gen/hotelops/connectivity/v1/connectivity_pb.js";
import {
  CodecSample_Mode,
  CodecSampleSchema,
  Color,
  SearchThingsResponseSchema,
} from "../../test/gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { render } from "./codec.ts";
import { jsonPieces } from "./codec-text.ts";
import { answerList, LazyList } from "../lib/lazy-list.ts";

/** The text every way it can be cut: whole (the default piece size), in pieces of 1 and of 100 characters. */
function spellings(desc: DescMessage, message: Record<string, unknown>, field?: string): string[] {
  return [undefined, 1, 100].map((size) => [...jsonPieces(desc, message, field, size)].join(""));
}

const thing = (i: number) => ({
  id: `t${i}`,
  name: i % 2 === 0 ? `name "${i}" \u2028 é` : "",
  amountMinor: BigInt(i * 1000 - 7),
  ...(i % 3 === 0 ? {} : { createdAt: timestampFromDate(new Date(Date.UTC(2026, 10, 22, 9, 30, i))) }),
  ...(i % 4 === 0 ? { note: "n" } : {}),
  ...(i % 5 === 0 ? { channel: "web" } : {}),
  color: i % 3,
  tags: i % 2 === 0 ? ["a", "b"] : [],
  active: i % 2 === 1,
  count: i,
  ...(i % 6 === 0 ? { parent: { id: "p" } } : {}),
  totals: i % 7 === 0 ? { a: 5n, "1": 2n, __proto__x: 3n } : {},
  palette: [Color.RED, Color.DEEP_BLUE],
});

/** 50 room types x 5 rate plans: every other rate plan with 366 days, the rest with none or a few. */
function ariAnswer() {
  const dates = Array.from({ length: 366 }, (_, i) => new Date(Date.UTC(2027, 0, 1 + i)).toISOString().slice(0, 10));
  return {
    propertyCode: "P-1",
    from: "2027-01-01",
    to: "2028-01-02",
    toExclusive: true,
    currency: "TRY",
    amountScale: 2,
    roomTypes: Array.from({ length: 50 }, (_, r) => ({
      code: `RT${r}`,
      ...(r % 2 === 0 ? { externalCode: `X${r}` } : {}),
      ratePlans: Array.from({ length: 5 }, (_, p) => ({
        code: `RP${p}`,
        days: dates.slice(0, (r + p) % 2 === 0 ? 366 : p).map((date, i) => ({
          date,
          available: 20 - (i % 3),
          priceMinor: i % 11 === 0 ? undefined : BigInt(10000 + i),
          minStay: i % 3 === 0 ? 2 : undefined,
          closedToArrival: i % 7 === 5,
          closedToDeparture: false,
          stopSell: i % 17 === 0,
        })),
      })),
    })),
  };
}

describe("the codec's JSON text in pieces", () => {
  it("spells every message exactly as JSON.stringify(render()) does", () => {
    const samples: [DescMessage, Record<string, unknown>][] = [
      [CodecSampleSchema, create(CodecSampleSchema)],
      [CodecSampleSchema, {}],
      [
        CodecSampleSchema,
        create(CodecSampleSchema, {
          total: 9007199254740991n,
          amounts: [-9007199254740991n, 0n, 5n],
          maybeAmount: 0n,
          maybeFlag: false,
          maybeBlob: new Uint8Array([1, 2, 3]),
          chunks: [new Uint8Array([0])],
          labels: [create(StringValueSchema, { value: "a" })],
          mode: CodecSample_Mode.FAST,
          optionalColor: Color.RED,
          colors: { true: Color.DEEP_BLUE },
          byNumber: { 3: "three", [-1]: "minus one" },
          things: { a: { id: "t" } },
          target: { case: "roomRef", value: { id: "101" } },
          attributes: { floor: 2, tags: ["quiet"], nothing: null },
          ratio: Number.NaN,
          weight: Number.NEGATIVE_INFINITY,
          displayName: "shown",
          elapsed: create(DurationSchema, { seconds: 90n }),
        }),
      ],
      [SearchThingsResponseSchema, { things: [], nextCursor: "" }],
      [SearchThingsResponseSchema, { things: Array.from({ length: 700 }, (_, i) => thing(i)), nextCursor: "c" }],
      [SearchThingsResponseSchema, create(SearchThingsResponseSchema, { things: [thing(1), thing(2)] })],
      [GetAriResponseSchema, ariAnswer()],
      [GetAriResponseSchema, { roomTypes: [{ code: "A", ratePlans: [] }, { code: "B" }] }],
      [
        ListReservationsResponseSchema,
        {
          data: Array.from({ length: 600 }, (_, i) => ({
            code: `B${i}`,
            createdAt: timestampFromDate(new Date(Date.UTC(2027, 0, 1, 0, 0, i))),
            roomTypeCodes: Array.from({ length: i % 3 }, (_, k) => ({ code: `RT${k}` })),
          })),
          hasMore: true,
        },
      ],
    ];
    for (const [desc, message] of samples) {
      const expected = JSON.stringify(render(desc, message));
      expect(spellings(desc, message)).toEqual([expected, expected, expected]);
    }
  });

  it("spells a response_body field as the rendered field, null when the message shows none", () => {
    const message = { things: Array.from({ length: 300 }, (_, i) => thing(i)), nextCursor: "c" };
    const rendered = render(SearchThingsResponseSchema, message) as Record<string, JsonValue>;
    for (const field of ["things", "nextCursor"])
      expect(spellings(SearchThingsResponseSchema, message, field)).toEqual(
        Array(3).fill(JSON.stringify(rendered[field])),
      );
    expect(spellings(SearchThingsResponseSchema, message, "nope")).toEqual(["null", "null", "null"]);
  });

  it("writes a large answer in pieces of about the asked size, rendering each only when it is asked for", () => {
    const answer = ariAnswer();
    const whole = JSON.stringify(render(GetAriResponseSchema, answer));
    const size = 64 * 1024;
    const pieces = [...jsonPieces(GetAriResponseSchema, answer, undefined, size)];
    // each at most one batch of 256 days (under 48,000 characters, each day with its occupancy prices) past the size
    for (const piece of pieces) expect(piece.length).toBeLessThan(size + 48_000);
    expect(pieces.length).toBeGreaterThan(whole.length / (size + 48_000));
    expect(pieces.join("")).toBe(whole);

    // a value JSON cannot carry at the end: the first pieces come out before it is reached
    answer.roomTypes.at(-2)!.ratePlans[0]!.days.at(-1)!.priceMinor = 2n ** 60n;
    const lazy = jsonPieces(GetAriResponseSchema, answer, undefined, size);
    for (let i = 0; i < 10; i++) expect(lazy.next().value).toBe(pieces[i]);
    expect(() => [...lazy]).toThrow(expect.objectContaining({ code: "internal" }));
  });

  it("spells a list built in parts as the whole list, building each part when the text reaches it", () => {
    const answer = ariAnswer();
    const whole = JSON.stringify(render(GetAriResponseSchema, answer));
    const built: number[] = [];
    const inParts = (sizes: number[]) =>
      answerList(
        { protocolName: "rest" },
        new LazyList(function* () {
          let at = 0;
          for (const n of sizes) {
            built.push(at);
            yield answer.roomTypes.slice(at, (at += n));
          }
        }),
      );
    // empty parts, a part of one, uneven sizes; and no parts at all
    for (const text of spellings(GetAriResponseSchema, { ...answer, roomTypes: inParts([0, 1, 7, 0, 42, 0]) }))
      expect(text).toBe(whole);
    expect(spellings(GetAriResponseSchema, { ...answer, roomTypes: inParts([]) })).toEqual(
      Array(3).fill(JSON.stringify(render(GetAriResponseSchema, { ...answer, roomTypes: [] }))),
    );

    // a part is built when the text reaches it: the next one only after this one's text was taken
    built.length = 0;
    const pieces = jsonPieces(GetAriResponseSchema, { ...answer, roomTypes: inParts([5, 5, 40]) }, undefined, 1000);
    let taken = "";
    while (built.length < 2) taken += pieces.next().value as string;
    expect(built).toEqual([0, 5]);
    const fifth = JSON.stringify(render(GetAriResponseSchema, { roomTypes: answer.roomTypes.slice(0, 5) })).slice(
      0,
      -2,
    );
    expect(taken.length).toBeGreaterThan(fifth.length);
    expect(whole.startsWith(taken)).toBe(true);
  });
});
