import { getOption, type DescField } from "@bufbuild/protobuf";
import { field as fieldExtension, type FieldDoc } from "../../gen/hotelops/api/v1/rest_pb.js";

/** The `(hotelops.api.v1.field)` option of a field (all defaults when it has none). */
export function fieldDoc(field: DescField): FieldDoc {
  return getOption(field, fieldExtension);
}

/** The field's documented example as a JSON value: the text itself for strings, parsed JSON otherwise. */
export function declaredExample(field: DescField): unknown {
  const text = fieldDoc(field).example;
  if (text === "") return undefined;
  const isString = (field.fieldKind === "scalar" || field.fieldKind === "list") && field.scalar === 9;
  const value: unknown = isString ? text : JSON.parse(text);
  return field.fieldKind === "list" && !Array.isArray(value) ? [value] : value;
}

/** Fields whose variant names them as one of several response shapes, grouped by variant (declaration order). */
export function variantsOf(fields: readonly DescField[]): Map<string, DescField[]> {
  const out = new Map<string, DescField[]>();
  for (const f of fields) {
    const v = fieldDoc(f).variant;
    if (v !== "") out.set(v, [...(out.get(v) ?? []), f]);
  }
  return out;
}
