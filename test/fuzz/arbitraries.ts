import fc from "fast-check";
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";

/** Strings an attacker sends: NUL, unpaired surrogates, huge, traversal, injection, format edge cases. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "DEMO-ANK\u0000",
    "a\u0000b",
    "\uD800",
    "x\uDFFFy",
    "\uDBFF\uDBFF",
    "",
    " ",
    "'; drop table users;--",
    "../../etc/passwd",
    "%00",
    "%2e%2e%2f",
  ),
  fc.constantFrom(
    "0000-00-00",
    "2026-02-30",
    "9999-99-99",
    "2026-13-01",
    "2026-1-1",
    "1970-01-01T00:00:00Z",
    "-1",
    "1e309",
    "NaN",
    "true",
    "null",
    "{}",
    "v1:-1",
    "v1:99999999999999999999",
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 }),
  fc.nat({ max: 70_000 }).map((n) => "x".repeat(n)),
);

/** Numbers as JSON values: out of every integer range, negative, fractional, numeric strings. */
const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    1.5,
    -0.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53 + 2,
    1e308,
    -1e308,
    "18446744073709551616",
    "-9223372036854775809",
    "0x10",
    "1e3",
    " 1",
    "",
    "NaN",
    "Infinity",
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => b.toString()),
);

/** Any JSON value (wrong types anywhere). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostileString, hostileNumber);

const WKT_DATE = new Set(["google.protobuf.Timestamp", "google.protobuf.Duration"]);

/** A JSON object shaped like the message (fields by JSON name), each value hostile for its type, sometimes of a wrong type. */
export function messageJson(desc: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of desc.fields)
    model[field.jsonName] = fc.oneof(
      { weight: 5, arbitrary: fieldJson(field, depth) },
      { weight: 1, arbitrary: anyJson },
    );
  return fc.record(model, { requiredKeys: [] });
}

function fieldJson(field: DescField, depth: number): fc.Arbitrary<unknown> {
  const one = singleJson(field, depth);
  if (field.fieldKind === "list") return fc.array(one, { maxLength: 3 });
  if (field.fieldKind === "map")
    return fc.dictionary(
      hostileString.filter((k) => k.length < 50),
      one,
      { maxKeys: 3 },
    );
  return one;
}

function singleJson(field: DescField, depth: number): fc.Arbitrary<unknown> {
  const kind = field.fieldKind === "map" ? field.mapKind : field.fieldKind;
  if (kind === "enum") {
    const e =
      field.fieldKind === "map" || field.fieldKind === "list" || field.fieldKind === "enum" ? field.enum : undefined;
    const names = e?.values.map((v) => v.name) ?? ["X"];
    return fc.oneof(fc.constantFrom(...names), hostileNumber, hostileString);
  }
  if (kind === "message") {
    const m = field.message;
    if (m === undefined) return anyJson;
    if (WKT_DATE.has(m.typeName)) return hostileString;
    if (m.typeName.startsWith("google.protobuf.")) return anyJson;
    return depth >= 2 ? fc.constant({}) : messageJson(m, depth + 1);
  }
  const scalar = field.scalar;
  switch (scalar) {
    case ScalarType.STRING:
      return hostileString;
    case ScalarType.BYTES:
      return fc.oneof(fc.base64String({ maxLength: 40 }), hostileString);
    case ScalarType.BOOL:
      return fc.oneof(fc.boolean(), fc.constantFrom("true", 1, "yes"));
    default:
      return hostileNumber;
  }
}

/** Request bodies: shaped-but-hostile, any JSON, broken JSON text, unknown fields, oversized. */
export function bodyText(desc: DescMessage, maxBodyBytes: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: messageJson(desc).map((o) => JSON.stringify(o)) },
    { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          "{",
          "[",
          '{"a":}',
          "nul",
          "\u0000",
          '{"x":1e999}',
          "",
          '{"__proto__":{"x":1}}',
          '{"a":"\\ud800"}',
          '"\\u0000"',
        )
        .chain((t) => fc.string({ maxLength: 8 }).map((s) => t + s)),
    },
    { weight: 1, arbitrary: messageJson(desc).map((o) => JSON.stringify({ ...o, unknownFieldZz: 1 })) },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ pad: "x".repeat(maxBodyBytes + 10) })) },
  );
}

/** Path parameter values: hostile strings, percent-encoded (NUL as %00, surrogates as broken UTF-8). */
export const pathValue: fc.Arbitrary<string> = fc.oneof(
  hostileString.map((s) => encodeURIComponent(s.isWellFormed() ? s : s.replace(/[\uD800-\uDFFF]/g, "%ED%A0%80"))),
  fc.constantFrom(
    "%00",
    "DEMO-ANK%00",
    "%ED%A0%80",
    "%C0%AE",
    "%",
    "%zz",
    "..",
    "00000000-0000-0000-0000-000000000000",
  ),
);
