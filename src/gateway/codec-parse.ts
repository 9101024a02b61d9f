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
import { enumNames, isWrapper, wrapperUnboxed } from "./codec-shared.ts";
import { BAD, bad, mapKeyCheck, parseTimestamp, scalarParser, type Parse } from "./codec-parse-scalars.ts";

/**
 * The parsing half of the codec (see codec.ts for the rules). It builds protobuf-es messages directly and
 * collects every problem with its field path (`thing.parent.id`, `tags[2]`, `totals.eur`) instead of stopping at
 * the first, so a client can fix a form in one round trip.
 */

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
