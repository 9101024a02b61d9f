// The REST codec against protobuf-es's own JSON (toJson/fromJson) on the same messages: the codec does more
// (our null/enum/int64/timestamp rules, per-field violations), so a ratio near or below 1 means it costs no
// more than canonical protobuf JSON would. Runs in memory; `node bench/codec.bench.ts` runs it alone.
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  SearchThingsResponseSchema,
  ThingSchema,
  UpdateThingRequestSchema,
} from "../test/gen/hotelops/gatewaytest/v1/gateway_test_pb.js";
import { GetAriResponseSchema } from "../gen/hotelops/connectivity/v1/connectivity_pb.js";
import { parse, render } from "../src/gateway/codec.ts";
import { jsonPieces } from "../src/gateway/codec-text.ts";

function perOp(n: number, f: () => unknown): number {
  for (let i = 0; i < n / 10; i++) f(); // warm-up
  const t = performance.now();
  for (let i = 0; i < n; i++) f();
  return ((performance.now() - t) * 1000) / n;
}

export async function benchCodec(): Promise<void> {
  const thing = (i: number) =>
    create(ThingSchema, {
      id: `t${i}`,
      name: "name",
      amountMinor: BigInt(i * 1000),
      createdAt: timestampFromDate(new Date()),
      note: "n",
      color: 1,
      tags: ["a", "b"],
      active: true,
      count: i,
      parent: { id: "p" },
      totals: { a: 5n },
      palette: [1, 2],
    });
  const list = create(SearchThingsResponseSchema, {
    things: Array.from({ length: 50 }, (_, i) => thing(i)),
    nextCursor: "c",
  });
  const body = {
    id: "u1",
    name: "renamed",
    amountMinor: 12345,
    createdAt: "2026-11-22T09:30:00.123Z",
    note: "hi",
    color: "RED",
  };
  const canonicalBody = { ...body, color: "COLOR_RED" };

  const ours = perOp(3000, () => JSON.stringify(render(SearchThingsResponseSchema, list)));
  const theirs = perOp(3000, () => JSON.stringify(toJson(SearchThingsResponseSchema, list)));
  console.log(
    `render 50 things: ${ours.toFixed(1)} us, protobuf toJson ${theirs.toFixed(1)} us, ratio ${(ours / theirs).toFixed(2)}`,
  );

  // a 366-day ARI answer of 50 room types x 5 rate plans (13 MB of JSON): whole, and in the gateway's pieces
  const dates = Array.from({ length: 366 }, (_, i) => new Date(Date.UTC(2027, 0, 1 + i)).toISOString().slice(0, 10));
  const ari = {
    propertyCode: "P",
    roomTypes: Array.from({ length: 50 }, (_, r) => ({
      code: `RT${r}`,
      ratePlans: Array.from({ length: 5 }, (_, p) => ({
        code: `RP${p}`,
        days: dates.map((date, i) => ({
          date,
          available: 20,
          priceMinor: BigInt(10000 + i),
          ...(i % 3 === 0 ? { minStay: 2 } : {}),
          closedToArrival: i % 7 === 5,
          closedToDeparture: false,
          stopSell: i % 17 === 0,
        })),
      })),
    })),
  };
  const whole = perOp(20, () => JSON.stringify(render(GetAriResponseSchema, ari)));
  const pieces = perOp(20, () => {
    for (const piece of jsonPieces(GetAriResponseSchema, ari)) void piece;
  });
  console.log(
    `ARI 50 x 5 x 366 as JSON text: whole ${(whole / 1000).toFixed(1)} ms, in pieces ${(pieces / 1000).toFixed(1)} ms, ratio ${(pieces / whole).toFixed(2)}`,
  );

  const parsed = perOp(100_000, () => parse(UpdateThingRequestSchema, body));
  const canonical = perOp(100_000, () => fromJson(UpdateThingRequestSchema, canonicalBody));
  console.log(
    `parse 6-field body: ${parsed.toFixed(2)} us, protobuf fromJson ${canonical.toFixed(2)} us, ratio ${(parsed / canonical).toFixed(2)}`,
  );
}

if (import.meta.main) await benchCodec();
