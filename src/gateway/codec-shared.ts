import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";

/** Pieces the renderer and the parser share: enum names, scalar kinds and how protobuf-es holds values. */

export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** 0001-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z, the range of google.protobuf.Timestamp. */
export const MIN_TIMESTAMP_MS = -62135596800000;
export const MAX_TIMESTAMP_MS = 253402300799999;

/** FeatureSet.FieldPresence.IMPLICIT: proto3 fields without `optional`, always rendered with their default. */
export const IMPLICIT = 2;

export function isInt64(scalar: ScalarType): boolean {
  return (
    scalar === ScalarType.INT64 ||
    scalar === ScalarType.UINT64 ||
    scalar === ScalarType.SINT64 ||
    scalar === ScalarType.FIXED64 ||
    scalar === ScalarType.SFIXED64
  );
}

const WRAPPERS = new Set([
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
]);

export function isWrapper(desc: DescMessage): boolean {
  return WRAPPERS.has(desc.typeName);
}

/**
 * protobuf-es keeps a singular wrapper field (not in a oneof) as the bare scalar (`channel?: string`), but a
 * wrapper in a list, map or oneof as a message `{ value }`. Both the renderer and the parser must agree.
 */
export function wrapperUnboxed(field: DescField): boolean {
  return field.fieldKind === "message" && field.oneof === undefined;
}

/** The UPPER_SNAKE prefix buf lint requires on enum values: ReservationStatus -> "RESERVATION_STATUS_". */
export function enumPrefix(e: Pick<DescEnum, "name">): string {
  const snake = e.name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2") // reservationStatus -> reservation_Status
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2"); // URLKind -> URL_Kind
  return `${snake.toUpperCase()}_`;
}

interface EnumNames {
  /** number -> JSON name (prefix stripped); the zero value and unknown numbers are absent (rendered null). */
  byNumber: Map<number, string>;
  /** Accepted JSON names (with and without prefix) -> number; the zero value is not accepted by name. */
  byName: Map<string, number>;
  /** For error messages. */
  allowed: string;
}

const enumCache = new WeakMap<DescEnum, EnumNames>();

export function enumNames(e: DescEnum): EnumNames {
  let names = enumCache.get(e);
  if (names === undefined) {
    const prefix = enumPrefix(e);
    const byNumber = new Map<number, string>();
    const byName = new Map<string, number>();
    for (const v of e.values) {
      if (v.number === 0) continue;
      const short = v.name.startsWith(prefix) ? v.name.slice(prefix.length) : v.name;
      if (!byNumber.has(v.number)) byNumber.set(v.number, short); // the first of aliased values names the number
      byName.set(short, v.number);
      byName.set(v.name, v.number);
    }
    names = { byNumber, byName, allowed: [...new Set(byNumber.values())].join(", ") };
    enumCache.set(e, names);
  }
  return names;
}

/** Enum value name without the UPPER_SNAKE type prefix; the zero (unspecified) value is null. */
export function shortEnumName(e: DescEnum, number: number): string | null {
  return enumNames(e).byNumber.get(number) ?? null;
}
