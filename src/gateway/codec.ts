import { fromJson, toJson, type DescEnum, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { AppError, type FieldViolation } from "../errors.ts";

/**
 * The one JSON codec of the REST faces (CONTRACT.md), layered on protobuf's canonical JSON:
 * int64 as JSON numbers (|n| <= 2^53-1), timestamps with exactly three fraction digits, unset `optional`,
 * message and wrapper fields as null, defaults always emitted, enums by name without the type prefix
 * (RESERVATION_STATUS_GUARANTEED is "GUARANTEED"; the zero *_UNSPECIFIED value is null).
 */

const INT64 = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

interface FieldPlan {
  field: DescField;
  json: string;
  /** Present as null when unset. */
  nullable: boolean;
}

const plans = new WeakMap<DescMessage, FieldPlan[]>();
function planOf(desc: DescMessage): FieldPlan[] {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plan = desc.fields.map((field) => ({
      field,
      json: field.jsonName,
      nullable: (field.fieldKind === "message" && !isJsonWkt(field.message)) || field.presence === 1 /* EXPLICIT */ || field.oneof !== undefined,
    }));
    plans.set(desc, plan);
  }
  return plan;
}

function isJsonWkt(m: DescMessage): boolean {
  return m.typeName === "google.protobuf.Struct" || m.typeName === "google.protobuf.Value" || m.typeName === "google.protobuf.ListValue";
}

/** The UPPER_SNAKE prefix buf lint requires on enum values: ReservationStatus -> "RESERVATION_STATUS_". */
export function enumPrefix(e: DescEnum): string {
  return `${e.name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}_`;
}

/** Enum value name without the UPPER_SNAKE type prefix; the zero (unspecified) value is null. */
export function shortEnumName(e: DescEnum, number: number): string | null {
  const v = e.values.find((x) => x.number === number);
  if (v === undefined || number === 0) return null;
  const prefix = enumPrefix(e);
  return v.name.startsWith(prefix) ? v.name.slice(prefix.length) : v.name;
}

// ---------- rendering ----------

export function render(desc: DescMessage, message: Message): JsonValue {
  const proto = toJson(desc, message, { alwaysEmitImplicit: true, enumAsInteger: true });
  return renderValue(desc, proto);
}

function renderValue(desc: DescMessage, proto: JsonValue): JsonValue {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return typeof proto === "string" ? timestamp3(proto) : proto;
    case "google.protobuf.Int64Value":
    case "google.protobuf.UInt64Value":
      return int64Out(proto, desc.typeName);
  }
  if (isJsonWkt(desc) || desc.typeName.startsWith("google.protobuf.") && desc.typeName.endsWith("Value")) return proto;
  const obj = (proto ?? {}) as Record<string, JsonValue>;
  const out: Record<string, JsonValue> = {};
  for (const { field, json, nullable } of planOf(desc)) {
    const v = obj[json];
    if (v === undefined) {
      out[json] = nullable ? null : field.fieldKind === "list" ? [] : field.fieldKind === "map" ? {} : null;
      continue;
    }
    out[json] = renderField(field, v);
  }
  return out;
}

function renderField(field: DescField, v: JsonValue): JsonValue {
  switch (field.fieldKind) {
    case "scalar":
      return INT64.has(scalarName(field.scalar)) ? int64Out(v, field.name) : v;
    case "enum":
      return typeof v === "number" ? shortEnumName(field.enum, v) : v;
    case "message":
      return renderValue(field.message, v);
    case "list":
      return (v as JsonValue[]).map((x) =>
        field.listKind === "message" ? renderValue(field.message, x) : field.listKind === "enum" ? shortEnumName(field.enum, x as number) : INT64.has(scalarName(field.scalar)) ? int64Out(x, field.name) : x,
      );
    case "map": {
      const out: Record<string, JsonValue> = {};
      for (const [k, x] of Object.entries(v as Record<string, JsonValue>)) {
        out[k] = field.mapKind === "message" ? renderValue(field.message, x) : field.mapKind === "enum" ? shortEnumName(field.enum, x as number) : INT64.has(scalarName(field.scalar)) ? int64Out(x, field.name) : x;
      }
      return out;
    }
  }
}

function int64Out(v: JsonValue, what: string): number {
  const big = BigInt(v as string | number);
  if (big > MAX_SAFE || big < -MAX_SAFE) throw new AppError("internal", `${what} exceeds the JSON-safe integer range`);
  return Number(big);
}

/** RFC 3339 with 0, 3, 6 or 9 fraction digits -> exactly three (truncated, as every client parses ms). */
function timestamp3(s: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(s);
  if (m === null) return s;
  return `${m[1]}.${(m[2] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
}

// ---------- parsing ----------

/** Parses our JSON into a message; every problem is reported with its field path. */
export function parse<D extends DescMessage>(desc: D, json: unknown, violations: FieldViolation[] = []): Message {
  const proto = toProtoJson(desc, json, "", violations);
  if (violations.length > 0) throw new AppError("invalid_argument", `Invalid request: ${violations.map((v) => `${v.field || "body"} ${v.reason}`).join("; ")}`, { details: violations });
  try {
    return fromJson(desc, proto as JsonValue);
  } catch (err) {
    throw new AppError("invalid_argument", `Invalid request: ${(err as Error).message}`, { details: [{ field: "", reason: (err as Error).message }] });
  }
}

function toProtoJson(desc: DescMessage, v: unknown, path: string, out: FieldViolation[]): JsonValue | undefined {
  if (v === null) return undefined;
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      if (typeof v !== "string" || Number.isNaN(Date.parse(v)) || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/.test(v)) {
        out.push({ field: path, reason: "must be an ISO 8601 timestamp such as 2026-11-22T09:30:00.000Z" });
        return undefined;
      }
      return new Date(v).toISOString();
    case "google.protobuf.Struct":
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return v as JsonValue;
  }
  if (desc.typeName.startsWith("google.protobuf.") && desc.typeName.endsWith("Value")) {
    return scalarIn(desc.fields[0]!, v, path, out);
  }
  if (typeof v !== "object" || Array.isArray(v)) {
    out.push({ field: path, reason: "must be an object" });
    return undefined;
  }
  const fields = new Map<string, FieldPlan>();
  for (const p of planOf(desc)) {
    fields.set(p.json, p);
    fields.set(p.field.name, p);
  }
  const result: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
    const p = fields.get(key);
    const fieldPath = path === "" ? key : `${path}.${key}`;
    if (p === undefined) {
      out.push({ field: fieldPath, reason: "is not a known field" });
      continue;
    }
    if (value === null) continue;
    const converted = fieldIn(p.field, value, fieldPath, out);
    if (converted !== undefined) result[p.json] = converted;
  }
  return result;
}

function fieldIn(field: DescField, v: unknown, path: string, out: FieldViolation[]): JsonValue | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return scalarIn(field, v, path, out);
    case "enum":
      return enumIn(field.enum, v, path, out);
    case "message":
      return toProtoJson(field.message, v, path, out);
    case "list": {
      if (!Array.isArray(v)) {
        out.push({ field: path, reason: "must be an array" });
        return undefined;
      }
      return v.map((x, i) => {
        const p = `${path}[${i}]`;
        const r = field.listKind === "message" ? toProtoJson(field.message, x, p, out) : field.listKind === "enum" ? enumIn(field.enum, x, p, out) : scalarIn(field, x, p, out);
        return r ?? null;
      });
    }
    case "map": {
      if (typeof v !== "object" || Array.isArray(v)) {
        out.push({ field: path, reason: "must be an object" });
        return undefined;
      }
      const r: Record<string, JsonValue> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const p = `${path}.${k}`;
        const c = field.mapKind === "message" ? toProtoJson(field.message, x, p, out) : field.mapKind === "enum" ? enumIn(field.enum, x, p, out) : scalarIn(field, x, p, out);
        if (c !== undefined) r[k] = c;
      }
      return r;
    }
  }
}

function enumIn(e: DescEnum, v: unknown, path: string, out: FieldViolation[]): JsonValue | undefined {
  if (typeof v === "string") {
    const prefix = enumPrefix(e);
    const hit = e.values.find((x) => x.name === v || x.name === prefix + v);
    if (hit !== undefined && hit.number !== 0) return hit.number;
  }
  const allowed = e.values.filter((x) => x.number !== 0).map((x) => shortEnumName(e, x.number));
  out.push({ field: path, reason: `must be one of ${allowed.join(", ")}` });
  return undefined;
}

function scalarIn(field: DescField, v: unknown, path: string, out: FieldViolation[]): JsonValue | undefined {
  const kind = scalarName(field.scalar);
  const bad = (reason: string): undefined => {
    out.push({ field: path, reason });
    return undefined;
  };
  switch (kind) {
    case "string":
      return typeof v === "string" ? v : bad("must be a string");
    case "bool":
      return typeof v === "boolean" ? v : bad("must be true or false");
    case "bytes":
      return typeof v === "string" ? v : bad("must be base64 text");
    case "double":
    case "float":
      return typeof v === "number" && Number.isFinite(v) ? v : bad("must be a number");
    default: {
      if (typeof v !== "number" || !Number.isInteger(v)) return bad("must be an integer");
      if (!Number.isSafeInteger(v)) return bad("is beyond 2^53-1");
      if (kind.startsWith("u") || kind.startsWith("fixed")) {
        if (v < 0) return bad("must not be negative");
      }
      if (!INT64.has(kind) && (v > 2147483647 || v < -2147483648)) return bad("is out of the 32-bit range");
      return v;
    }
  }
}

const SCALAR_NAMES: Record<number, string> = { 1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64" };
function scalarName(scalar: number | undefined): string {
  return SCALAR_NAMES[scalar ?? 9] ?? "string";
}
