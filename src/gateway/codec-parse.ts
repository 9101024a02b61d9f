import { isSecurityCodeName } from "../lib/card-data.ts";
import {
  create,
  fromJson,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { AppError, type FieldViolation } from "../errors.ts";
import {
  MAX_SAFE,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  enumNames,
  isInt64,
  isWrapper,
  wrapperUnboxed,
} from "./codec-shared.ts";

/**
 * The parsing half of the codec (see codec.ts for the rules). It builds protobuf-es messages directly and
 * collects every problem with its field path (`thing.parent.id`, `tags[2]`, `totals.eur`) instead of stopping at
 * the first, so a client can fix a form in one round trip.
 */

/** What a field parser returns after it reported a violation; the field stays unset. */
const BAD: unique symbol = Symbol("bad");
type Parse = (value: unknown, path: string, out: FieldViolation[]) => unknown;

interface ParsePlan {
  local: string;
  /** localName of the field's oneof group and the JSON names of its members (for the error). */
  oneof: { local: string; names: string } | undefined;
  parse: Parse;
}

/** No request of any API takes a card security code: a field named like one is refused as card data (422). */
const SECURITY_CODE = "is a card security code, which is never accepted";

const plans = new WeakMap<DescMessage, Map<string, ParsePlan>>();

/**
 * Parses our JSON into a message of `desc`; null means unset. Violations found earlier (query parameters, form
 * fields) can be passed in: they are reported together with the body's. Throws AppError("invalid_argument").
 */
export function parse<D extends DescMessage>(
  desc: D,
  json: unknown,
  violations: FieldViolation[] = [],
): MessageShape<D> {
  const message = json === null || json === undefined ? create(desc) : parseMessage(desc, json, "", violations);
  if (violations.some((v) => v.reason === SECURITY_CODE))
    // card data is refused as unprocessable (422), whatever else is wrong, naming the field and never its value
    throw new AppError("validation_failed", "Card security codes are never accepted.", {
      details: violations.filter((v) => v.reason === SECURITY_CODE),
    });
  if (violations.length > 0) {
    // the first few in the message (the details list up to 20): a message never grows with the request
    const shown = violations.slice(0, 3).map((v) => `${(v.field || "body").slice(0, 100)} ${v.reason}`);
    const summary = violations.length > 3 ? `${shown.join("; ")}; and ${violations.length - 3} more` : shown.join("; ");
    throw new AppError("invalid_argument", `Invalid request: ${summary}`, { details: violations });
  }
  return message as MessageShape<D>;
}

function bad(out: FieldViolation[], field: string, reason: string): typeof BAD {
  out.push({ field, reason });
  return BAD;
}

function parseMessage(desc: DescMessage, v: unknown, path: string, out: FieldViolation[]): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return bad(out, path, "must be an object");
  const plan = planOf(desc);
  const msg = create(desc) as unknown as Record<string, unknown>;
  const obj = v as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const fieldPath = path === "" ? key : `${path}.${key}`;
    const p = plan.get(key);
    if (p === undefined) {
      out.push({ field: fieldPath, reason: isSecurityCodeName(key) ? SECURITY_CODE : "is not a known field" });
      continue;
    }
    const value = obj[key];
    if (value === null) continue;
    const parsed = p.parse(value, fieldPath, out);
    if (parsed === BAD) continue;
    if (p.oneof === undefined) {
      msg[p.local] = parsed;
    } else if ((msg[p.oneof.local] as { case: string | undefined }).case !== undefined) {
      out.push({ field: fieldPath, reason: `only one of ${p.oneof.names} may be set` });
    } else {
      msg[p.oneof.local] = { case: p.local, value: parsed };
    }
  }
  return msg;
}

/** Fields by JSON name and by proto name (clients and form posts use either). */
function planOf(desc: DescMessage): Map<string, ParsePlan> {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plan = new Map();
    for (const field of desc.fields) {
      const p: ParsePlan = {
        local: field.localName,
        oneof:
          field.oneof === undefined
            ? undefined
            : { local: field.oneof.localName, names: field.oneof.fields.map((f) => f.jsonName).join(", ") },
        parse: fieldParser(field),
      };
      plan.set(field.jsonName, p);
      plan.set(field.name, p);
    }
    plans.set(desc, plan);
  }
  return plan;
}

function fieldParser(field: DescField): Parse {
  switch (field.fieldKind) {
    case "scalar":
      return scalarParser(field.scalar, field.longAsString);
    case "enum":
      return enumParser(field.enum);
    case "message":
      return messageParser(field.message, wrapperUnboxed(field));
    case "list": {
      const item =
        field.listKind === "scalar"
          ? scalarParser(field.scalar, field.longAsString)
          : field.listKind === "enum"
            ? enumParser(field.enum)
            : messageParser(field.message, false);
      return (v, path, out) => {
        if (!Array.isArray(v)) return bad(out, path, "must be an array");
        const list = new Array<unknown>(v.length);
        let ok = true;
        for (let i = 0; i < v.length; i++) {
          const x: unknown = v[i];
          const r = x === null ? bad(out, `${path}[${i}]`, "must not be null") : item(x, `${path}[${i}]`, out);
          if (r === BAD) ok = false;
          else list[i] = r;
        }
        return ok ? list : BAD;
      };
    }
    case "map": {
      const key = mapKeyCheck(field.mapKey);
      const item =
        field.mapKind === "scalar"
          ? scalarParser(field.scalar, false)
          : field.mapKind === "enum"
            ? enumParser(field.enum)
            : messageParser(field.message, false);
      return (v, path, out) => {
        if (typeof v !== "object" || v === null || Array.isArray(v)) return bad(out, path, "must be an object");
        const map: Record<string, unknown> = {};
        let ok = true;
        for (const [k, x] of Object.entries(v)) {
          const p = `${path}.${k}`;
          const reason = k === "__proto__" ? "is not an allowed key" : key(k);
          const r =
            reason !== undefined ? bad(out, p, reason) : x === null ? bad(out, p, "must not be null") : item(x, p, out);
          if (r === BAD) ok = false;
          else map[k] = r;
        }
        return ok ? map : BAD;
      };
    }
  }
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const UINT32_MAX = 4294967295;
const FLOAT_MAX = 3.4028234663852886e38;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function scalarParser(scalar: ScalarType, longAsString: boolean): Parse {
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
function mapKeyCheck(scalar: ScalarType): (key: string) => string | undefined {
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

function enumParser(e: DescEnum): Parse {
  const names = enumNames(e);
  return (v, path, out) => {
    const n = typeof v === "string" ? names.byName.get(v) : undefined;
    return n ?? bad(out, path, `must be one of ${names.allowed}`);
  };
}

function messageParser(desc: DescMessage, unboxed: boolean): Parse {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return (v, path, out) => {
        const ts = typeof v === "string" ? parseTimestamp(v) : undefined;
        return ts === undefined
          ? bad(out, path, "must be an ISO 8601 timestamp such as 2026-11-22T09:30:00.000Z")
          : create(TimestampSchema, ts);
      };
    case "google.protobuf.Struct":
      // protobuf-es keeps a Struct field as the plain JSON object itself
      return (v, path, out) =>
        typeof v === "object" && v !== null && !Array.isArray(v) ? v : bad(out, path, "must be an object");
  }
  if (isWrapper(desc)) {
    const valueField = desc.fields[0];
    const inner = scalarParser(valueField?.fieldKind === "scalar" ? valueField.scalar : ScalarType.STRING, false);
    if (unboxed) return inner;
    return (v, path, out) => {
      const r = inner(v, path, out);
      return r === BAD ? BAD : create(desc, { value: r } as never);
    };
  }
  if (desc.typeName.startsWith("google.protobuf.")) {
    // Value, ListValue, Duration, FieldMask...: protobuf's own JSON form is ours
    return (v, path, out) => {
      try {
        return fromJson(desc, v as JsonValue);
      } catch (err) {
        return bad(out, path, (err as Error).message.replace(/^cannot decode [^:]*: /, ""));
      }
    };
  }
  return (v, path, out) => parseMessage(desc, v, path, out);
}

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))$/;

/** RFC 3339 (any offset, up to nanoseconds) -> seconds and nanos in UTC; undefined when not a real instant. */
function parseTimestamp(s: string): { seconds: bigint; nanos: number } | undefined {
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
