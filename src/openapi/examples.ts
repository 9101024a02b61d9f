import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { shortEnumName } from "../gateway/codec.ts";
import { declaredExample, fieldDoc, variantsOf } from "./field-doc.ts";
import type { Mode } from "./schema.ts";

/**
 * Example bodies built from the descriptors: a field's declared example (`(hotelops.api.v1.field).example`),
 * else its first allowed value, else a value fitting its format, name and type. A request example carries the
 * required fields and those with a declared example; a response example carries every field the codec renders.
 * src/openapi/openapi.test.ts checks each example against its own schema.
 */

const UUID = "0195f3a0-5b2e-7c41-9d7a-3c5b8e2f1a90";
const BY_FORMAT: Record<string, string> = {
  date: "2027-03-10",
  "date-time": "2026-11-22T09:30:00.000Z",
  uuid: UUID,
  email: "manager@demo.test",
  uri: "https://hooks.example.com/hotelops",
};

/** One example of the JSON of `desc`; `variant` picks one shape of a message with variant fields. */
export function exampleOf(desc: DescMessage, mode: Mode, exclude: ReadonlySet<string> = new Set(), variant?: string): unknown {
  return messageExample(desc, mode, exclude, variant, 0);
}

/** The variant names of a response message (empty when it has one shape). */
export function variantNames(desc: DescMessage): string[] {
  return [...variantsOf(desc.fields).keys()];
}

function messageExample(desc: DescMessage, mode: Mode, exclude: ReadonlySet<string>, variant: string | undefined, depth: number): unknown {
  const wkt = wellKnownExample(desc.typeName);
  if (wkt !== undefined) return wkt;
  const variants = variantsOf(desc.fields);
  const chosen = variant ?? [...variants.keys()][0];
  const out: Record<string, unknown> = {};
  for (const field of desc.fields) {
    if (exclude.has(field.name)) continue;
    const d = fieldDoc(field);
    if (mode === "out" && d.variant !== "" && d.variant !== chosen) continue;
    if (depth > 4 && field.fieldKind === "message") continue;
    const value = fieldExample(field, mode, depth);
    // a request example shows what is required or documented, and nested objects that show something
    const shown = d.required || d.example !== "" || (isObjectLike(field) && JSON.stringify(value) !== "{}" && JSON.stringify(value) !== "[{}]");
    if (mode === "in" && !shown) continue;
    out[field.jsonName] = value;
  }
  return out;
}

function isObjectLike(field: DescField): boolean {
  return (field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")) && !field.message.typeName.startsWith("google.protobuf.");
}

export function fieldExample(field: DescField, mode: Mode, depth = 0): unknown {
  const declared = declaredExample(field);
  if (declared !== undefined) return declared;
  switch (field.fieldKind) {
    case "scalar":
      return scalarExample(field, field.scalar);
    case "enum":
      return shortEnumName(field.enum, field.enum.values.find((v) => v.number !== 0)?.number ?? 0) ?? null;
    case "message":
      return messageExample(field.message, mode, new Set(), undefined, depth + 1);
    case "list": {
      if (field.listKind === "message") return [messageExample(field.message, mode, new Set(), undefined, depth + 1)];
      if (field.listKind === "enum") return [shortEnumName(field.enum, field.enum.values.find((v) => v.number !== 0)?.number ?? 0)];
      return [scalarExample(field, field.scalar)];
    }
    case "map":
      return {};
  }
}

function scalarExample(field: DescField, scalar: ScalarType): unknown {
  const d = fieldDoc(field);
  if (d.values.length > 0) return d.values[0];
  if (scalar === ScalarType.BOOL) return false;
  if (scalar === ScalarType.BYTES) return "";
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) return 1.5;
  const name = field.name;
  if (scalar !== ScalarType.STRING) {
    if (name.endsWith("_minor")) return 50000;
    if (name === "amount_scale") return 100;
    if (name === "limit") return 100;
    if (name === "adults") return 2;
    if (name === "children") return 0;
    if (name.endsWith("_bp")) return 8500;
    if (name === "year") return 2027;
    if (name === "month") return 3;
    return 1;
  }
  if (d.format !== "") return BY_FORMAT[d.format] ?? "";
  if (name === "id" || name.endsWith("_id")) return UUID;
  if (name.endsWith("_ids")) return UUID;
  if (name.endsWith("_date") || name === "from" || name === "to" || name === "start" || name === "end") return "2027-03-10";
  if (name === "currency") return "TRY";
  if (name === "email") return "manager@demo.test";
  if (name.endsWith("_code") || name === "code") return "DEMO-IST";
  if (name.endsWith("_name") || name === "name") return "Ayse Yilmaz";
  if (name === "message" || name === "description" || name === "notes") return "Late arrival, about 23:00.";
  return name.replaceAll("_", " ");
}

function wellKnownExample(typeName: string): unknown {
  switch (typeName) {
    case "google.protobuf.Timestamp":
      return BY_FORMAT["date-time"];
    case "google.protobuf.Struct":
      return {};
    case "google.protobuf.ListValue":
      return ["2027-03-10", "R100042", 50000];
    case "google.protobuf.Value":
      return "value";
    case "google.protobuf.Duration":
      return "1.5s";
    case "google.protobuf.Empty":
      return {};
  }
  return undefined;
}
