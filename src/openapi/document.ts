import { getOption, type DescField, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { rule as authRule, PrincipalKind, PrincipalKindSchema } from "../../gen/hotelops/auth/v1/rule_pb.js";
import { errorCodes } from "../errors.ts";
import { routesOf, type Route } from "../gateway/index.ts";
import { shortEnumName } from "../gateway/codec.ts";
import { AUDIENCES, audienceOf } from "./audiences.ts";
import { commentOf } from "./comments.ts";
import { exampleOf, fieldExample, variantNames } from "./examples.ts";
import { fieldDoc } from "./field-doc.ts";
import { pruneComponents } from "./prune.ts";
import { SchemaRegistry, type Schema } from "./schema.ts";
import { errorComponents, errorResponseComponents, errorResponsesFor, headerComponents, idempotencyKeyParameter, securitySchemes, securityOf } from "./components.ts";
import { API_LICENSE } from "./info.ts";

export interface OpenApiOptions {
  title: string;
  version: string;
  description: string;
}

type Operation = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the REST faces, built from the route table the gateway serves
 * (`routesOf`) and the message descriptors, with JSON shapes as the gateway's codec renders them.
 * Pass descriptors with source info to get proto comments as descriptions. Operations are grouped by
 * audience (audiences.ts); components nothing refers to are left out (prune.ts), so a section added to the
 * document (e.g. `webhooks`) keeps the components it refers to.
 */
export function buildOpenApi(services: readonly DescService[], options: OpenApiOptions): Record<string, unknown> {
  const routes = routesOf(services.flatMap((s) => s.methods.map((method) => ({ method }))));
  const schemas = new SchemaRegistry();
  const scopes = new Set<string>();
  // responses first: a message rendered in a response owns its plain component name (see SchemaRegistry)
  const responses = routes.map((route) => successResponse(route, schemas));
  const paths: Record<string, Record<string, Operation>> = {};
  const seenIds = new Map<string, number>();
  routes.forEach((route, i) => {
    const path = openApiPath(route);
    const id = `${route.method.parent.name}_${route.method.name}`;
    const n = (seenIds.get(id) ?? 0) + 1;
    seenIds.set(id, n);
    const op = operation(route, schemas, scopes, responses[i]!, n === 1 ? id : `${id}${n}`);
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = op;
  });
  const rank = (path: string): number => {
    const a = audienceOf(path);
    return a === undefined ? AUDIENCES.length : AUDIENCES.indexOf(a);
  };
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)));
  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags as string[])));
  const tags = [
    ...AUDIENCES.filter((a) => used.has(a.tag)).map((a) => ({ name: a.tag, description: a.description })),
    ...services.filter((s) => used.has(s.name)).map((s) => ({ name: s.name, ...(commentOf(s) === undefined ? {} : { description: commentOf(s) }) })),
  ];

  return pruneComponents({
    openapi: "3.1.0",
    info: { title: options.title, version: options.version, description: options.description, license: API_LICENSE },
    servers: [{ url: "/", description: "This service" }],
    tags,
    paths: sortedPaths,
    components: {
      schemas: Object.fromEntries(Object.entries({ ...schemas.components, ...errorComponents(Object.keys(errorCodes)) }).sort(([a], [b]) => a.localeCompare(b))),
      responses: errorResponseComponents(),
      headers: headerComponents(),
      parameters: { IdempotencyKey: idempotencyKeyParameter(false) },
      securitySchemes: securitySchemes([...scopes].sort()),
    },
  });
}

/** `/api/v1/properties/{property_code}/availability` -> `/api/v1/properties/{propertyCode}/availability`. */
function openApiPath(route: Route): string {
  const parts = route.template.segments.map((seg) => {
    switch (seg.kind) {
      case "literal":
        return seg.value;
      case "var":
        return `{${jsonPath(route.method.input, seg.field)}}`;
      case "wild":
        return "*";
      case "deep":
        return "**";
    }
  });
  return `/${parts.join("/")}${route.template.verb === undefined ? "" : `:${route.template.verb}`}`;
}

function jsonPath(desc: DescMessage, path: string): string {
  const out: string[] = [];
  let message: DescMessage | undefined = desc;
  for (const name of path.split(".")) {
    const field: DescField | undefined = message?.fields.find((f) => f.name === name || f.jsonName === name);
    out.push(field?.jsonName ?? name);
    message = field?.fieldKind === "message" ? field.message : undefined;
  }
  return out.join(".");
}

function fieldAtPath(desc: DescMessage, path: string): DescField | undefined {
  let message: DescMessage | undefined = desc;
  let field: DescField | undefined;
  for (const name of path.split(".")) {
    field = message?.fields.find((f) => f.name === name || f.jsonName === name);
    message = field?.fieldKind === "message" ? field.message : undefined;
  }
  return field;
}

function operation(route: Route, schemas: SchemaRegistry, scopes: Set<string>, success: [string, unknown], operationId: string): Operation {
  const method = route.method;
  const r = getOption(method, authRule);
  const write = route.httpMethod !== "GET" && route.httpMethod !== "HEAD";
  const parameters: unknown[] = [];
  for (const field of route.template.fields) {
    const leaf = fieldAtPath(method.input, field);
    parameters.push({ name: jsonPath(method.input, field), in: "path", required: true, schema: leaf === undefined ? { type: "string" } : paramSchema(leaf), ...(leaf !== undefined && commentOf(leaf) !== undefined ? { description: commentOf(leaf) } : {}), ...(leaf === undefined ? {} : { example: fieldExample(leaf, "in") }) });
  }
  if (route.body !== "*") {
    const bound = new Set(route.template.fields);
    if (route.body !== "") bound.add(route.body);
    queryParams(method.input, "", "", bound, 0, parameters);
  }
  // required: inline (OpenAPI 3.1 tools ignore `required` beside a $ref)
  if (write) parameters.push(route.rest.idempotencyKeyRequired ? idempotencyKeyParameter(true) : route.rest.sensitiveResponse ? idempotencyKeyParameter(false, false) : { $ref: "#/components/parameters/IdempotencyKey" });

  const who = r.public ? [] : r.principals.length > 0 ? r.principals : [PrincipalKind.STAFF, PrincipalKind.INTERNAL];
  const security = securityOf(who, r.scope);
  if (r.scope !== "") scopes.add(r.scope);

  const notes: string[] = [];
  const comment = commentOf(method);
  if (comment !== undefined) notes.push(comment);
  if (r.public) notes.push("No authentication.");
  else {
    const kinds = who.map((k) => shortEnumName(PrincipalKindSchema, k)?.toLowerCase() ?? String(k));
    notes.push(`Callers: ${kinds.join(", ")}.${r.permission === "" ? "" : ` Staff need the permission \`${r.permission}\` in the session's active property.`}${r.scope === "" ? "" : ` Clients need the scope \`${r.scope}\`.`}`);
  }
  notes.push(`Also served as gRPC/Connect \`${method.parent.typeName}/${method.name}\`.`);

  const op: Operation = {
    operationId,
    summary: route.rest.summary === "" ? humanize(method.name) : route.rest.summary,
    description: notes.join("\n\n"),
    tags: [audienceOf(openApiPath(route))?.tag ?? method.parent.name],
    parameters,
  };
  const body = requestBody(route, schemas);
  if (body !== undefined) op.requestBody = body;
  op.responses = { [success[0]]: success[1], ...errorResponsesFor(route, write, r.public) };
  op.security = security;
  op["x-grpc-method"] = `/${method.parent.typeName}/${method.name}`;
  if (r.permission !== "") op["x-permission"] = r.permission;
  return op;
}


function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Fields not bound by the path or the body become query parameters (nested ones as `a.b`). */
function queryParams(desc: DescMessage, prefix: string, jsonPrefix: string, bound: ReadonlySet<string>, depth: number, out: unknown[]): void {
  for (const field of desc.fields) {
    const path = prefix === "" ? field.name : `${prefix}.${field.name}`;
    const name = jsonPrefix === "" ? field.jsonName : `${jsonPrefix}.${field.jsonName}`;
    if (bound.has(path) || field.fieldKind === "map") continue;
    if (field.fieldKind === "message" && !isParamMessage(field.message)) {
      const partly = [...bound].some((b) => b.startsWith(`${path}.`));
      if (depth < 2 || partly) queryParams(field.message, path, name, bound, depth + 1, out);
      continue;
    }
    const doc = commentOf(field);
    const d = fieldDoc(field);
    const example = d.example !== "" || d.required ? { example: fieldExample(field, "in") } : {};
    out.push({ name, in: "query", ...(d.required ? { required: true } : {}), schema: paramSchema(field), ...(field.fieldKind === "list" ? { style: "form", explode: true } : {}), ...(doc === undefined ? {} : { description: doc }), ...example });
  }
}

function isParamMessage(m: DescMessage): boolean {
  return m.typeName === "google.protobuf.Timestamp" || (m.typeName.startsWith("google.protobuf.") && m.typeName.endsWith("Value") && m.fields.length === 1);
}

/** The schema of a path or query parameter: never null, enums as their short names, documented values and format. */
function paramSchema(field: DescField): Schema {
  const d = fieldDoc(field);
  const base = plainParamSchema(field);
  const refine = (s: Schema): Schema => ({ ...s, ...(d.format === "" ? {} : { format: d.format }), ...(d.values.length === 0 ? {} : { enum: [...d.values] }), ...(d.required && s.type === "string" ? { minLength: 1 } : {}), ...(d.minimum === undefined ? {} : { minimum: Number(d.minimum) }), ...(d.maximum === undefined ? {} : { maximum: Number(d.maximum) }), ...(d.pattern === "" ? {} : { pattern: d.pattern }) });
  return base.type === "array" ? { ...base, items: refine(base.items as Schema) } : refine(base);
}

function plainParamSchema(field: DescField): Schema {
  const one = (kind: "scalar" | "enum" | "message"): Schema => {
    if (kind === "enum" && field.enum !== undefined) return { type: "string", enum: field.enum.values.filter((v) => v.number !== 0).map((v) => shortEnumName(field.enum!, v.number)) };
    if (kind === "message" && field.message !== undefined) {
      if (field.message.typeName === "google.protobuf.Timestamp") return { type: "string", format: "date-time" };
      return scalarParam(field.message.fields[0]?.scalar);
    }
    return scalarParam(field.scalar);
  };
  if (field.fieldKind === "list") return { type: "array", items: one(field.listKind) };
  if (field.fieldKind === "map") return { type: "object" };
  return one(field.fieldKind);
}

function scalarParam(kind: number | undefined): Schema {
  if (kind === 8) return { type: "boolean" };
  if (kind === 1 || kind === 2) return { type: "number" };
  if (kind === 3 || kind === 4 || kind === 6 || kind === 16 || kind === 18) return { type: "integer", format: "int64", minimum: kind === 4 || kind === 6 ? 0 : -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
  if (kind === 5 || kind === 13 || kind === 7 || kind === 15 || kind === 17) return { type: "integer", format: "int32" };
  return { type: "string" };
}

function requestBody(route: Route, schemas: SchemaRegistry): Record<string, unknown> | undefined {
  if (route.body === "") return undefined;
  const input = route.method.input;
  let schema: Schema;
  let example: unknown;
  let target: DescMessage = input;
  if (route.body === "*") {
    const pathTop = new Set(route.template.fields.filter((f) => !f.includes(".")));
    schema = schemas.message(input, "in", pathTop);
    example = exampleOf(input, "in", pathTop);
  } else {
    const field = fieldAtPath(input, route.body);
    if (field === undefined) return undefined;
    if (field.fieldKind === "message") target = field.message;
    schema = schemas.field(field, "in");
    example = fieldExample(field, "in");
  }
  const types = route.rest.requestContentTypes.length > 0 ? route.rest.requestContentTypes : ["application/json"];
  const content: Record<string, unknown> = {};
  for (const type of types) content[type] = type === "multipart/form-data" ? { schema: multipartSchema(target, schemas) } : { schema, example };
  return { required: target.fields.length > 0, content };
}

/** Multipart parts: file parts fill bytes fields or messages with `content`, other parts are text fields. */
function multipartSchema(desc: DescMessage, schemas: SchemaRegistry): Schema {
  const file = { type: "string", contentMediaType: "application/octet-stream" };
  const properties: Record<string, Schema> = {};
  for (const field of desc.fields) {
    const isFile = (kind: string, scalar: number | undefined, message: DescMessage | undefined): boolean =>
      (kind === "scalar" && scalar === 12) || (kind === "message" && message?.fields.some((f) => f.name === "content" && f.scalar === 12) === true);
    const doc = commentOf(field) === undefined ? {} : { description: commentOf(field) };
    if (field.fieldKind === "list" && isFile(field.listKind, field.scalar, field.message)) properties[field.jsonName] = { type: "array", items: file, ...doc };
    else if (isFile(field.fieldKind, field.scalar, field.message)) properties[field.jsonName] = { ...file, ...doc };
    else properties[field.jsonName] = schemas.field(field, "in");
  }
  const required = desc.fields.filter((f) => fieldDoc(f).required).map((f) => f.jsonName);
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

function successResponse(route: Route, schemas: SchemaRegistry): [string, unknown] {
  const status = route.rest.successStatus || 200;
  const headers: Record<string, unknown> = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
  if (route.rest.rateLimitClass !== "none") {
    for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) headers[h] = { $ref: `#/components/headers/${h}` };
  }
  if (route.httpMethod !== "GET") headers["Idempotency-Replayed"] = { $ref: "#/components/headers/Idempotency-Replayed" };
  const output = route.method.output;
  const description = commentOf(output) ?? (status === 204 ? "No content." : "Success.");
  if (status === 204) return ["204", { description, headers }];
  let schema: Schema;
  let examples: Record<string, unknown>;
  if (route.responseBody !== "") {
    const field = fieldAtPath(output, route.responseBody);
    schema = field === undefined ? {} : schemas.field(field, "out");
    examples = { example: field === undefined ? {} : fieldExample(field, "out") };
  } else {
    schema = schemas.message(output, "out");
    const variants = variantNames(output);
    examples = variants.length === 0 ? { example: exampleOf(output, "out") } : { examples: Object.fromEntries(variants.map((v) => [v, { summary: v, value: exampleOf(output, "out", new Set(), v) }])) };
  }
  return [String(status), { description, headers, content: { "application/json": { schema, ...examples } } }];
}
