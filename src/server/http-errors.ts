import type { ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";
import type { AppError } from "../errors.ts";

export type NodeResponse = ServerResponse | Http2ServerResponse;

/** Our REST error body (docs/conventions.md, "Errors"): {"error":{"code","message","requestId","details"?}}. */
export function errorBody(err: AppError, requestId: string): object {
  const error: Record<string, unknown> = { code: err.code, message: err.message, requestId };
  if (err.details.length > 0) error.details = err.details;
  return { error };
}

/** RFC 6749 section 5.2 error body, used by the OAuth token endpoint. */
function oauthErrorBody(err: AppError): object {
  const oauthCode =
    err.headers["x-oauth-error"] ?? (err.code === "unauthorized" ? "invalid_client" : "invalid_request");
  return { error: oauthCode, error_description: err.message };
}

/** Writes an AppError as an HTTP JSON response with the headers the error asks for. */
export function writeError(res: NodeResponse, err: AppError, requestId: string, style: "" | "oauth2" = ""): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(style === "oauth2" ? oauthErrorBody(err) : errorBody(err, requestId));
  const headers: Record<string, string | number> = {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "x-request-id": requestId,
  };
  for (const [name, value] of Object.entries(err.headers)) if (!name.startsWith("x-oauth-")) headers[name] = value;
  if (err.retryAfterSeconds !== undefined) headers["retry-after"] = Math.max(1, Math.ceil(err.retryAfterSeconds));
  if (err.code === "unauthorized" && headers["www-authenticate"] === undefined) headers["www-authenticate"] = "Bearer";
  send(res, style === "oauth2" ? oauthStatus(err) : err.httpStatus, headers, body);
}

/** RFC 6749 5.2: OAuth errors are 400, or 401 for a failed client authentication; 429 and 5xx keep theirs. */
function oauthStatus(err: AppError): number {
  const status = err.httpStatus;
  return status === 401 || status === 429 || status >= 500 ? status : 400;
}

/**
 * Sets a response header; `Vary` adds to what is there instead of replacing it (CORS puts `Origin` in before the
 * answer adds `Accept-Encoding`: a cache must key on both).
 */
export function setResponseHeader(res: NodeResponse, name: string, value: string | number): void {
  if (name.toLowerCase() === "vary") {
    const before = res.getHeader("vary");
    if (typeof before === "string" && before !== "") {
      const names = before.split(",").map((n) => n.trim());
      const have = new Set(names.map((n) => n.toLowerCase()));
      for (const n of String(value).split(",")) if (!have.has(n.trim().toLowerCase())) names.push(n.trim());
      value = names.join(", ");
    }
  }
  res.setHeader(name, value);
}

/** Writes a complete response; works for http/1.1 and http2 compat responses alike. */
export function send(
  res: NodeResponse,
  status: number,
  headers: Record<string, string | number>,
  body?: string | Uint8Array,
): void {
  res.statusCode = status;
  for (const name in headers) setResponseHeader(res, name, headers[name]!);
  if (body === undefined) res.end();
  else endWith(res, body);
}

/** Binary bodies up to this size go to node:http as latin1 strings (endWith). */
const ONE_WRITE_BYTES = 16 * 1024;

/**
 * Ends a response with its body. node:http writes a string body in one piece with the header, but a Buffer as a
 * second chunk of a writev, which costs about 10 us more CPU per call; so on HTTP/1.1 a small binary body goes as a
 * latin1 string (the same bytes). On HTTP/2 a body is a DATA frame of its own anyway.
 */
export function endWith(res: NodeResponse, body: Uint8Array | string): void {
  if (typeof body === "string" || "stream" in res || body.byteLength > ONE_WRITE_BYTES) res.end(body);
  else res.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("latin1"), "latin1");
}
