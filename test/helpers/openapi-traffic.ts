import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/**
 * Checks real REST exchanges against the committed OpenAPI document, in both directions:
 * - a request the document calls invalid (missing required parameter, header or field, wrong type, value
 *   outside an enum, bad format) must be refused with a 4xx: a server that accepts it is laxer than documented;
 * - every response must have a documented status and a body that validates against that status's schema.
 * test/helpers/openapi-setup.ts feeds it every fetch the integration tests make to the service.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Exchange {
  method: string;
  url: URL;
  requestHeaders: Headers;
  /** The parsed request body: JSON value, form fields, multipart text fields; "unknown" when it cannot be read. */
  requestBody:
    | { kind: "none" }
    | { kind: "json"; text: string }
    | { kind: "form"; fields: Record<string, string> }
    | { kind: "multipart"; fields: Record<string, unknown> }
    | { kind: "unknown" };
  status: number;
  responseHeaders: Headers;
  responseText: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Multipart text parts are text: a part documented as a boolean or a number carries its JSON text ("true", "3"). */
function typedParts(schema: Json, fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, v]) => {
      const types = [schema?.properties?.[name]?.type].flat();
      if (typeof v !== "string") return [name, v];
      if (types.includes("boolean") && (v === "true" || v === "false")) return [name, v === "true"];
      if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(v))
        return [name, Number(v)];
      return [name, v];
    }),
  );
}
const base = "https://hotelops.test/openapi.json";

export function createTrafficChecker(
  doc: Json = JSON.parse(readFileSync(new URL("../../openapi/hotelops.v1.json", import.meta.url), "utf8")) as Json,
) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  for (const f of ["int32", "int64", "uint32", "double", "float"]) ajv.addFormat(f, true);
  ajv.addFormat("date-time", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  ajv.addFormat("date", (s: string) => DATE.test(s) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s));
  ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat("email", /^[^\s@]+@[^\s@]+$/);
  ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:\/\/\S+$/i);
  const rewrite = (s: unknown): unknown =>
    JSON.parse(JSON.stringify(s).replaceAll('"#/components/', `"${base}#/components/`));
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}))
    ajv.addSchema(rewrite(schema) as object, `${base}#/components/schemas/${name}`);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (schema: unknown): ValidateFunction => {
    const key = JSON.stringify(schema);
    let v = compiled.get(key);
    if (v === undefined) compiled.set(key, (v = ajv.compile(rewrite(schema) as object)));
    return v;
  };
  const deref = (node: Json): Json =>
    typeof node?.$ref === "string"
      ? deref(
          node.$ref
            .slice(2)
            .split("/")
            .reduce((n: Json, k: string) => n?.[k], doc),
        )
      : node;

  // literal segments win over variables (`/reservations/options` before `/reservations/{reservationId}`)
  const templates = Object.keys(doc.paths)
    .map((path) => {
      const names: string[] = [];
      const source = path
        .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
        .replace(/\{([^}]+)\}/g, (_, name: string) => (names.push(name), "([^/]+)"));
      return { path, names, regex: new RegExp(`^${source}$`) };
    })
    .sort((a, b) => a.names.length - b.names.length);

  function requestProblems(op: Json, vars: Record<string, string>, x: Exchange): string[] {
    const out: string[] = [];
    for (const raw of op.parameters ?? []) {
      const p = deref(raw);
      let values: string[];
      if (p.in === "path") values = [vars[p.name]!];
      else if (p.in === "query") values = x.url.searchParams.getAll(p.name);
      else if (p.in === "header") values = x.requestHeaders.has(p.name) ? [x.requestHeaders.get(p.name)!] : [];
      else continue;
      if (values.length === 0) {
        if (p.required === true) out.push(`missing required ${p.in} parameter ${p.name}`);
        continue;
      }
      const value =
        p.schema?.type === "array"
          ? values.flatMap((v) => v.split(",")).map((v) => coerce(v, p.schema.items))
          : coerce(values[0]!, p.schema);
      const v = validator(p.schema ?? {});
      if (!v(value)) out.push(`${p.in} parameter ${p.name}=${JSON.stringify(value)}: ${ajv.errorsText(v.errors)}`);
    }
    const body = op.requestBody as Json | undefined;
    if (body !== undefined) {
      const b = x.requestBody;
      if (b.kind === "none") {
        if (body.required === true) out.push("missing required request body");
      } else if (b.kind === "json" || b.kind === "form" || b.kind === "multipart") {
        const type =
          b.kind === "json"
            ? "application/json"
            : b.kind === "form"
              ? "application/x-www-form-urlencoded"
              : "multipart/form-data";
        const media = body.content?.[type];
        if (media === undefined) out.push(`request content type ${type} is not documented`);
        else if (b.kind === "json") {
          let value: unknown;
          try {
            value = JSON.parse(b.text);
          } catch {
            out.push("request body is not JSON");
          }
          if (value !== undefined) {
            const v = validator(media.schema);
            if (!v(value)) out.push(`request body: ${ajv.errorsText(v.errors)}`);
          }
        } else {
          const v = validator(media.schema);
          const fields = b.kind === "multipart" ? typedParts(deref(media.schema), b.fields) : b.fields;
          if (!v(fields)) out.push(`request body: ${ajv.errorsText(v.errors)}`);
        }
      }
    }
    return out;
  }

  function responseProblems(op: Json, x: Exchange): string[] {
    const declared = op.responses?.[String(x.status)] ?? op.responses?.default;
    if (declared === undefined)
      return [
        `status ${x.status} is not documented (documented: ${Object.keys(op.responses ?? {}).join(", ")}): ${x.responseText.slice(0, 200)}`,
      ];
    const response = deref(declared);
    const content = response.content as Json | undefined;
    if (content === undefined)
      return x.responseText === "" ? [] : [`status ${x.status} is documented without a body but has one`];
    const media = content[(x.responseHeaders.get("content-type") ?? "").split(";")[0]!.trim()];
    if (media === undefined)
      return [`response content type ${x.responseHeaders.get("content-type")} is not documented for ${x.status}`];
    let value: unknown;
    try {
      value = JSON.parse(x.responseText);
    } catch {
      return [`status ${x.status}: response body is not JSON`];
    }
    const v = validator(media.schema);
    return v(value)
      ? []
      : [`status ${x.status} response body: ${ajv.errorsText(v.errors)}: ${x.responseText.slice(0, 300)}`];
  }

  return {
    /** Problems of one exchange ([] when it matches); undefined when the document does not describe the path. */
    check(x: Exchange): string[] | undefined {
      const method = x.method.toLowerCase();
      for (const t of templates) {
        const m = t.regex.exec(x.url.pathname);
        if (m === null) continue;
        const op = doc.paths[t.path][method] as Json | undefined;
        if (op === undefined) return undefined;
        const vars = Object.fromEntries(t.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
        const label = `${x.method} ${x.url.pathname}${x.url.search} -> ${x.status}`;
        const problems: string[] = [];
        const invalid = requestProblems(op, vars, x);
        if (invalid.length > 0 && x.status < 400)
          problems.push(`the server accepted a request the document forbids (${invalid.join("; ")})`);
        problems.push(...responseProblems(op, x));
        return problems.map((p) => `${label}: ${p}`);
      }
      return undefined;
    },
  };
}

function coerce(value: string, schema: Json | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema.type.find((t: string) => t !== "null") : schema?.type;
  if ((type === "integer" || type === "number") && value.trim() !== "" && !Number.isNaN(Number(value)))
    return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}
