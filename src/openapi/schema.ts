import type { DescEnum, DescField, DescMessage } from "@bufbuild/protobuf";
import { shortEnumName } from "../gateway/codec.ts";
import { describe } from "./comments.ts";
import { declaredExample, fieldDoc, variantsOf } from "./field-doc.ts";

/** A JSON Schema (OpenAPI 3.1 dialect) as plain data. */
export type Schema = Record<string, unknown>;

/**
 * "out": what the codec renders (every field present, unset optional/message fields as null; a message with
 * variant fields is a oneOf of its variants).
 * "in": what the codec parses (fields marked `required` must be there, every other field may be left out).
 */
export type Mode = "in" | "out";

const INT32 = new Set([5, 13, 7, 15, 17]);
const INT64 = new Set([3, 4, 6, 16, 18]);
const UNSIGNED = new Set([4, 6, 7, 13]);
const TIMESTAMP = "google.protobuf.Timestamp";

/**
 * JSON Schemas of messages exactly as src/gateway/codec.ts renders and parses them, collected as named
 * components (`#/components/schemas/<full type name>`). Messages used in responses get every property
 * `required` (the codec always emits them); a message that is also sent as input gets a second component
 * `<name>Input` without `required`.
 */
export class SchemaRegistry {
  readonly components: Record<string, Schema> = {};
  private readonly outputs = new Set<string>();
  private readonly names = new Map<string, string>();

  /** A reference to the schema of a message (well-known types are inlined). */
  message(desc: DescMessage, mode: Mode, exclude: ReadonlySet<string> = new Set()): Schema {
    const wkt = wellKnown(desc);
    if (wkt !== undefined) return wkt;
    const name = this.nameOf(desc, mode);
    if (!(name in this.components)) {
      this.components[name] = {}; // placeholder first: messages may refer to themselves
      const fields = desc.fields.filter((f) => !exclude.has(f.name));
      const variants = mode === "out" ? variantsOf(fields) : new Map<string, DescField[]>();
      if (variants.size > 0) {
        // exactly the keys of one variant (plus the fields in every variant): see the codec's variant rule
        const common = fields.filter((f) => fieldDoc(f).variant === "");
        const oneOf = [...variants].map(([variant, own]) => ({ title: variant, ...this.object([...common, ...own], mode) }));
        this.components[name] = { ...describe(desc), oneOf };
      } else {
        this.components[name] = { ...this.object(fields, mode), ...describe(desc) };
      }
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  private object(fields: readonly DescField[], mode: Mode): Schema {
    const properties: Record<string, Schema> = {};
    for (const field of fields) properties[field.jsonName] = this.field(field, mode);
    const required = mode === "out" ? Object.keys(properties) : fields.filter((f) => fieldDoc(f).required).map((f) => f.jsonName);
    return { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  }

  /** The schema of one field's JSON value, with its documented values, format and example. */
  field(field: DescField, mode: Mode): Schema {
    const plain = this.plainField(field, mode);
    // the codec reads null as "unset" for every field: a request may send it wherever a value is optional
    return refine(mode === "in" && !fieldDoc(field).required ? nullable(plain) : plain, field, mode);
  }

  private plainField(field: DescField, mode: Mode): Schema {
    const doc = describe(field);
    switch (field.fieldKind) {
      case "scalar":
        return { ...scalar(field.scalar, field.presence === 1 || field.oneof !== undefined), ...doc };
      case "enum":
        return { ...this.enumRef(field.enum), ...doc };
      case "message": {
        // an unset message field (well-known types included) is rendered as null
        return { ...nullable(this.message(field.message, mode)), ...doc };
      }
      case "list": {
        const items = field.listKind === "message" ? this.message(field.message, mode) : field.listKind === "enum" ? this.enumRef(field.enum) : scalar(field.scalar, false);
        return { type: "array", items, ...doc };
      }
      case "map": {
        const values = field.mapKind === "message" ? this.message(field.message, mode) : field.mapKind === "enum" ? this.enumRef(field.enum) : scalar(field.scalar, false);
        return { type: "object", additionalProperties: values, ...doc };
      }
    }
  }

  /** Enums render by name without the type prefix; the zero (unspecified) value renders as null. */
  enumRef(desc: DescEnum): Schema {
    const name = desc.typeName;
    if (!(name in this.components)) {
      const names = desc.values.filter((v) => v.number !== 0).map((v) => shortEnumName(desc, v.number)!);
      const valueDocs = desc.values
        .filter((v) => v.number !== 0)
        .map((v) => ({ name: shortEnumName(desc, v.number)!, text: describe(v).description }))
        .filter((v) => v.text !== undefined)
        .map((v) => `- \`${v.name}\`: ${v.text}`);
      const base = describe(desc).description;
      const description = [base, valueDocs.join("\n")].filter((s) => s !== undefined && s !== "").join("\n\n");
      this.components[name] = { type: ["string", "null"], enum: [...names, null], ...(description === "" ? {} : { description }) };
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  private nameOf(desc: DescMessage, mode: Mode): string {
    const key = `${mode}:${desc.typeName}`;
    let name = this.names.get(key);
    if (name === undefined) {
      if (mode === "out") {
        this.outputs.add(desc.typeName);
        name = desc.typeName;
      } else {
        // responses are generated first, so a message seen there already owns the plain name
        name = this.outputs.has(desc.typeName) ? `${desc.typeName}Input` : desc.typeName;
      }
      this.names.set(key, name);
    }
    return name;
  }
}

/** Adds a field's `(hotelops.api.v1.field)` values, format and example to its schema (items of a list). */
function refine(schema: Schema, field: DescField, mode: Mode): Schema {
  const d = fieldDoc(field);
  const example = declaredExample(field);
  // a required request field takes no null, and a required string no empty value
  if (mode === "in" && d.required) schema = required(schema);
  const bounded = d.minimum !== undefined || d.maximum !== undefined || d.pattern !== "";
  if (d.values.length === 0 && d.format === "" && example === undefined && !bounded && d.atLeastOneOf.length === 0)
    return schema;
  const target = field.fieldKind === "list" ? { ...(schema.items as Schema) } : { ...schema };
  if (d.format !== "") target.format = d.format;
  if (d.minimum !== undefined) target.minimum = Number(d.minimum);
  if (d.maximum !== undefined) target.maximum = Number(d.maximum);
  if (d.pattern !== "") target.pattern = d.pattern;
  if (d.values.length > 0) target.enum = Array.isArray(target.type) && target.type.includes("null") ? [...d.values, null] : [...d.values];
  const out = field.fieldKind === "list" ? { ...schema, items: target } : target;
  if (mode === "in" && d.atLeastOneOf.length > 0) {
    // a list that has items must hold one of these (an empty or absent list is the service's "unchanged" or
    // "required" case, stated by `required`)
    const contains = { contains: { enum: [...d.atLeastOneOf] } };
    Object.assign(out, d.required ? contains : { if: { type: "array", minItems: 1 }, then: contains });
  }
  if (example !== undefined) out.examples = [example];
  return out;
}

function required(schema: Schema): Schema {
  if (Array.isArray(schema.anyOf) && schema.anyOf.length === 2 && (schema.anyOf[1] as Schema).type === "null") {
    const { anyOf, ...rest } = schema;
    return { ...(anyOf[0] as Schema), ...rest };
  }
  const t = Array.isArray(schema.type) ? schema.type.filter((x) => x !== "null") : schema.type;
  const out: Schema = { ...schema, type: Array.isArray(t) && t.length === 1 ? t[0] : t };
  if (out.type === "string" && out.minLength === undefined) out.minLength = 1;
  if (out.type === "array" && out.minItems === undefined) out.minItems = 1;
  return out;
}

function nullable(schema: Schema): Schema {
  if (typeof schema.$ref === "string") return { anyOf: [schema, { type: "null" }] };
  const t = schema.type;
  if (typeof t === "string") return { ...schema, type: [t, "null"] };
  return schema;
}

function scalar(kind: number | undefined, isNullable: boolean): Schema {
  let s: Schema;
  if (kind === 8) s = { type: "boolean" };
  else if (kind === 1) s = { type: "number", format: "double" };
  else if (kind === 2) s = { type: "number", format: "float" };
  else if (kind === 12) s = { type: "string", contentEncoding: "base64" };
  else if (kind !== undefined && INT32.has(kind)) s = { type: "integer", format: UNSIGNED.has(kind) ? "uint32" : "int32", ...(UNSIGNED.has(kind) ? { minimum: 0 } : {}) };
  // int64 travels as a JSON number: the codec takes only integers JSON numbers hold exactly (+-(2^53-1))
  else if (kind !== undefined && INT64.has(kind)) s = { type: "integer", format: "int64", minimum: UNSIGNED.has(kind) ? 0 : -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
  else s = { type: "string" };
  return isNullable ? nullable(s) : s;
}

/** Well-known types with their own JSON form (protobuf canonical JSON, adjusted like the codec). */
function wellKnown(desc: DescMessage): Schema | undefined {
  const t = desc.typeName;
  if (!t.startsWith("google.protobuf.")) return undefined;
  switch (t) {
    case TIMESTAMP:
      return { type: "string", format: "date-time", examples: ["2026-11-22T09:30:00.000Z"] };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$", examples: ["1.5s"] };
    case "google.protobuf.FieldMask":
      return { type: "string", description: "Comma-separated lowerCamelCase field paths." };
    case "google.protobuf.Struct":
      return { type: "object" };
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Value":
      return {};
    case "google.protobuf.Empty":
      return { type: "object", additionalProperties: false };
    case "google.protobuf.Any":
      return { type: "object", properties: { "@type": { type: "string" } }, required: ["@type"] };
  }
  if (t.endsWith("Value") && desc.fields.length === 1) return scalar(desc.fields[0]!.scalar, false);
  return undefined;
}
