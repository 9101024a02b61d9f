import { ScalarType } from "@bufbuild/protobuf";
import type { FieldViolation } from "../errors.ts";
import { MAX_SAFE, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, isInt64 } from "./codec-shared.ts";

// The scalar half of the codec's parser (codec-parse.ts): numbers, strings, bytes, map keys and timestamps, each
// checked to the value the field's type can hold, a violation reported with its path.

/** What a field parser returns after it reported a violation; the field stays unset. */
export const BAD: unique symbol = Symbol("bad");
export type Parse = (value: unknown, path: string, out: FieldViolation[]) => unknown;

/** Reports a violation of the field at `field`; the field stays unset. */
export function bad(out: FieldViolation[], field: string, reason: string): typeof BAD {
  out.push({ field, reason });
  return BAD;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const UINT32_MAX = 4294967295;
const FLOAT_MAX = 3.4028234663852886e38;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function scalarParser(scalar: ScalarType, longAsString: boolean): Parse {
  switch (scalar) {
    case ScalarType.STRING:
      return (v, path, out) => (typeof v === "string" ? v : bad(out, path, "must be a string"));
    case ScalarType.BOOL:
      return (v, path, out) => (typeof v === "boolean" ? v : bad(out, path, "must be true or false"));
    case ScalarType.BYTES:
      return (v, path, out) => {
        if (typeof v !== "string" || !BASE64.test(v)) return bad(out, path, "must be base64 text");
        const b = Buffer.from(v, "base64");
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      };
    case ScalarType.DOUBLE:
      return (v, path, out) => (typeof v === "number" && Number.isFinite(v) ? v : bad(out, path, "must be a number"));
    case ScalarType.FLOAT:
      return (v, path, out) =>
        typeof v === "number" && Number.isFinite(v) && Math.abs(v) <= FLOAT_MAX
          ? v
          : bad(out, path, "must be a number within the 32-bit float range");
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return integer(0, UINT32_MAX, "must be an integer from 0 to 4294967295", (n) => n);
  }
  if (isInt64(scalar)) {
    const unsigned = scalar === ScalarType.UINT64 || scalar === ScalarType.FIXED64;
    const convert = longAsString ? (n: number) => String(n) : (n: number) => BigInt(n);
    // numbers only (never numeric strings): beyond 2^53-1 a JSON number has already lost digits
    return integer(
      unsigned ? 0 : -Number(MAX_SAFE),
      Number(MAX_SAFE),
      unsigned ? "must be an integer from 0 to 2^53-1" : "must be an integer within ±(2^53-1)",
      convert,
    );
  }
  return integer(INT32_MIN, INT32_MAX, "must be an integer within the 32-bit range", (n) => n);
}

function integer(min: number, max: number, range: string, convert: (n: number) => unknown): Parse {
  return (v, path, out) => {
    if (typeof v !== "number" || !Number.isInteger(v)) return bad(out, path, "must be an integer");
    return v >= min && v <= max ? convert(v) : bad(out, path, range);
  };
}

/** Map keys arrive as JSON object keys (strings); they must spell a value of the key type canonically. */
export function mapKeyCheck(scalar: ScalarType): (key: string) => string | undefined {
  if (scalar === ScalarType.STRING) return () => undefined;
  if (scalar === ScalarType.BOOL)
    return (k) => (k === "true" || k === "false" ? undefined : "key must be true or false");
  const min =
    scalar === ScalarType.UINT32 ||
    scalar === ScalarType.FIXED32 ||
    scalar === ScalarType.UINT64 ||
    scalar === ScalarType.FIXED64
      ? 0
      : isInt64(scalar)
        ? -Number(MAX_SAFE)
        : INT32_MIN;
  const max = isInt64(scalar)
    ? Number(MAX_SAFE)
    : scalar === ScalarType.UINT32 || scalar === ScalarType.FIXED32
      ? UINT32_MAX
      : INT32_MAX;
  return (k) => {
    const n = Number(k);
    return /^-?\d+$/.test(k) && String(n) === k && n >= min && n <= max
      ? undefined
      : `key must be an integer from ${min} to ${max}`;
  };
}

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))$/;

/** RFC 3339 (any offset, up to nanoseconds) -> seconds and nanos in UTC; undefined when not a real instant. */
export function parseTimestamp(s: string): { seconds: bigint; nanos: number } | undefined {
  const m = TIMESTAMP.exec(s);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not move years 0-99 into the 1900s
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (date.getUTCDate() !== day) return undefined; // 2026-02-30
  let ms = date.getTime();
  if (m[8] !== undefined) {
    const offsetHours = Number(m[9]);
    const offsetMinutes = Number(m[10]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    ms += m[8] === "+" ? -offset : offset;
  }
  if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) return undefined;
  return { seconds: BigInt(ms / 1000), nanos: m[7] === undefined ? 0 : Number(m[7].padEnd(9, "0")) };
}
