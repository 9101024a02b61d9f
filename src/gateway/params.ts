import type { DescField, DescMessage } from "@bufbuild/protobuf";
import type { FieldViolation } from "../errors.ts";

/**
 * Path variables, query parameters and form fields arrive as strings keyed by a field path (`a.b`, by JSON or
 * proto name). They are turned into the JSON shape the codec parses, typed by the descriptor: numbers and
 * booleans are converted, repeated fields take `a=1&a=2` or a comma list `a=1,2`.
 */
export function assignParam(
  desc: DescMessage,
  target: Record<string, unknown>,
  path: string,
  values: string[],
  violations: FieldViolation[],
): void {
  const names = path.split(".");
  let message = desc;
  let obj = target;
  for (let i = 0; i < names.length; i++) {
    const field = findField(message, names[i]!);
    if (field === undefined) {
      violations.push({ field: path, reason: "is not a known parameter" });
      return;
    }
    const last = i === names.length - 1;
    if (!last) {
      if (field.fieldKind !== "message") {
        violations.push({ field: path, reason: "is not a known parameter" });
        return;
      }
      const next = (obj[field.jsonName] ??= {}) as Record<string, unknown>;
      obj = next;
      message = field.message;
      continue;
    }
    if (field.fieldKind === "list") {
      const items = values
        .flatMap((v) => (field.listKind === "scalar" && field.scalar === 12 ? [v] : v.split(",")))
        .filter((v) => v !== "");
      const existing = (obj[field.jsonName] as unknown[] | undefined) ?? [];
      obj[field.jsonName] = [...existing, ...items.map((v) => coerce(field, v))];
      return;
    }
    if (field.fieldKind === "map") {
      violations.push({ field: path, reason: "cannot be set from a parameter" });
      return;
    }
    if (
      field.fieldKind === "message" &&
      !isWrapper(field.message) &&
      field.message.typeName !== "google.protobuf.Timestamp"
    ) {
      violations.push({ field: path, reason: "cannot be set from a parameter; set its fields (e.g. " + path + ".x)" });
      return;
    }
    obj[field.jsonName] = coerce(field, values[values.length - 1] ?? "");
  }
}

function findField(desc: DescMessage, name: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === name || f.name === name);
}

function isWrapper(m: DescMessage): boolean {
  return m.typeName.startsWith("google.protobuf.") && m.typeName.endsWith("Value") && m.fields.length === 1;
}

/** A string becomes what the codec expects for the field; the codec reports what does not fit. */
function coerce(field: DescField, raw: string): unknown {
  const scalar =
    field.fieldKind === "message" && isWrapper(field.message) ? field.message.fields[0]!.scalar : field.scalar;
  if (field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum")) return raw;
  if (field.fieldKind === "message") {
    if (field.message.typeName === "google.protobuf.Timestamp") return raw;
  }
  switch (scalar) {
    case 8: // bool
      return raw === "true" || raw === "1" ? true : raw === "false" || raw === "0" ? false : raw;
    case 9: // string
    case 12: // bytes
    case undefined:
      return raw;
    default: {
      const n = Number(raw);
      return raw.trim() === "" || Number.isNaN(n) ? raw : n;
    }
  }
}

/** The descriptor of the message at a top-level field path (for `body: "field"`). */
export function fieldAt(desc: DescMessage, name: string): DescField | undefined {
  return findField(desc, name);
}
