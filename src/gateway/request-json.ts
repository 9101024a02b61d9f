import type { DescMessage } from "@bufbuild/protobuf";
import { AppError, type FieldViolation } from "../errors.ts";
import { requestEncoding } from "../server/compression.ts";
import { readBody, restRefusals, type NodeRequest } from "../server/body.ts";
import { readMultipart, type UploadedFile } from "./multipart.ts";
import { assignParam, fieldAt } from "./params.ts";
import type { Route } from "./routes.ts";

/** The REST request read into our JSON: a JSON, form or multipart body, the query and the path variables. */

/** What a multipart body may hold. */
export interface UploadLimits {
  maxFileBytes: number;
  maxFiles: number;
  maxFieldBytes: number;
}

/** The request as our JSON: body, then query parameters, then path variables; problems go to `violations`. */
export async function requestJson(
  route: Route,
  vars: Map<string, string>,
  query: URLSearchParams,
  req: NodeRequest,
  maxBodyBytes: number,
  limits: UploadLimits,
  violations: FieldViolation[],
): Promise<Record<string, unknown>> {
  const desc = route.method.input;
  let json: Record<string, unknown> = {};
  if (route.body !== "") {
    const target = route.body === "*" ? desc : fieldAt(desc, route.body)?.message;
    if (target === undefined) throw new AppError("internal", `body field ${route.body} is not a message`);
    const body = await bodyJson(route, target, req, maxBodyBytes, limits, violations);
    json = route.body === "*" ? body : { [fieldAt(desc, route.body)!.jsonName]: body };
  }
  if (query.size > 0)
    for (const key of new Set(query.keys())) assignParam(desc, json, key, query.getAll(key), violations);
  for (const [field, value] of vars) assignParam(desc, json, field, [value], violations);
  return json;
}

async function bodyJson(
  route: Route,
  target: DescMessage,
  req: NodeRequest,
  maxBodyBytes: number,
  limits: UploadLimits,
  violations: FieldViolation[],
): Promise<Record<string, unknown>> {
  const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  const accepted = route.rest.requestContentTypes.length > 0 ? route.rest.requestContentTypes : ["application/json"];
  if (
    contentType === "" &&
    (req.headers["content-length"] === undefined || req.headers["content-length"] === "0") &&
    req.headers["transfer-encoding"] === undefined
  ) {
    return {};
  }
  if (!accepted.includes(contentType)) {
    throw new AppError("unsupported_media_type", `Content-Type must be ${accepted.join(" or ")}.`);
  }
  const coding = requestEncoding(req.headers["content-encoding"]);
  if (contentType === "multipart/form-data") {
    // images and PDFs are compressed already: an upload is read as it is sent
    if (coding !== undefined)
      throw new AppError("unsupported_media_type", "Multipart uploads are read without a Content-Encoding.");
    const { fields, files } = await readMultipart(req, limits);
    const out: Record<string, unknown> = {};
    for (const [name, value] of fields) assignParam(target, out, name, [value], violations);
    for (const file of files) assignFile(target, out, file, violations);
    return out;
  }
  const raw = await readBody(req, maxBodyBytes, restRefusals, coding);
  if (contentType === "application/x-www-form-urlencoded") {
    // Form posts (OAuth token requests among them, RFC 6749 3.2) ignore parameters the RPC does not know and
    // refuse a known single-valued parameter sent twice.
    const form = new URLSearchParams(raw.toString("utf8"));
    const out: Record<string, unknown> = {};
    for (const key of new Set(form.keys())) {
      const field = fieldAt(target, key);
      if (field === undefined) continue;
      const values = form.getAll(key);
      if (values.length > 1 && field.fieldKind !== "list")
        violations.push({ field: key, reason: "must not be repeated" });
      else assignParam(target, out, key, values, violations);
    }
    return out;
  }
  if (raw.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new AppError("invalid_argument", `Malformed JSON: ${(err as Error).message}`, {
      details: [{ field: "", reason: "malformed JSON" }],
    });
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new AppError("invalid_argument", "The JSON body must be an object.", {
      details: [{ field: "", reason: "must be an object" }],
    });
  }
  return parsed as Record<string, unknown>;
}

/**
 * A file part fills the field named like the part: a `bytes` field (or repeated bytes), or a (repeated)
 * message with `content` (bytes), `content_type` and `filename`.
 */
function assignFile(
  target: DescMessage,
  out: Record<string, unknown>,
  file: UploadedFile,
  violations: FieldViolation[],
): void {
  const field = fieldAt(target, file.field);
  const asMessage = {
    content: file.content.toString("base64"),
    contentType: file.contentType,
    filename: file.filename,
  };
  if (field === undefined) {
    violations.push({ field: file.field, reason: "is not a known file part" });
  } else if (field.fieldKind === "scalar" && field.scalar === 12) {
    out[field.jsonName] = asMessage.content;
  } else if (field.fieldKind === "list" && (field.listKind === "message" || field.scalar === 12)) {
    const list = (out[field.jsonName] ??= []) as unknown[];
    list.push(field.listKind === "message" ? asMessage : asMessage.content);
  } else if (field.fieldKind === "message") {
    out[field.jsonName] = asMessage;
  } else {
    violations.push({ field: file.field, reason: "does not take a file" });
  }
}
