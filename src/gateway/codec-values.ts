import { ScalarType, type JsonValue, type Message } from "@bufbuild/protobuf";
import { AppError } from "../errors.ts";
import { MAX_SAFE, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, isInt64 } from "./codec-shared.ts";

// The scalar half of the codec's renderer (codec.ts): 64-bit integers as JSON numbers, floats, bytes as base64
// and timestamps with three fraction digits.

export type Render = (value: unknown) => JsonValue;

/** A value that is its own JSON (strings, booleans, 32-bit numbers): the compiled renderer reads it inline. */
export const identity: Render = (v) => v as JsonValue;

export function scalarRenderer(scalar: ScalarType, what: string): Render {
  if (isInt64(scalar)) return (v) => int64Out(v, what);
  switch (scalar) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return floatOut;
    case ScalarType.BYTES:
      return bytesOut;
    default:
      return identity;
  }
}

export function isMessageValue(v: unknown): v is Message {
  return typeof v === "object" && v !== null && "$typeName" in v;
}

function int64Out(v: unknown, what: string): number {
  if (typeof v === "number") return v; // a field with jstype = JS_NUMBER
  const big = typeof v === "bigint" ? v : BigInt(v as string);
  if (big > MAX_SAFE || big < -MAX_SAFE)
    throw new AppError("internal", `${what} is beyond 2^53-1 and cannot be rendered as a JSON number`);
  return Number(big);
}

function floatOut(v: unknown): JsonValue {
  const n = v as number;
  if (Number.isFinite(n)) return n;
  // JSON has no NaN/Infinity; protobuf's JSON mapping spells them as strings
  return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
}

function bytesOut(v: unknown): JsonValue {
  const u8 = v as Uint8Array;
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("base64");
}

/** Exactly three fraction digits, truncated (every client parses milliseconds; rounding could move the second). */
export function timestampOut(v: unknown): JsonValue {
  // an init shape may leave either field out
  const ts = v as { seconds?: bigint; nanos?: number };
  const ms = Number(ts.seconds ?? 0n) * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000);
  if (!(ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS))
    throw new AppError("internal", `timestamp ${ts.seconds}s is outside 0001..9999`);
  return new Date(ms).toISOString();
}
