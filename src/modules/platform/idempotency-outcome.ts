import { create, fromBinary, isMessage, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { AppError, errorCodes, type ErrorCode } from "../../errors.ts";
import type { StoredError } from "./idempotency.repository.ts";

// What of an RPC's answer the idempotency store keeps, and how a stored one is replayed (idempotency.interceptor.ts).

/** Headers that belong to one delivery or one protocol, not to the stored outcome. */
const NOT_STORED =
  /^(x-request-id$|ratelimit-|retry-after$|idempotency-replayed$|content-|accept-encoding$|connect-|grpc-|trailer-)/;
/**
 * Refusals, not answers of an RPC that ran: authentication, permission, approval, rate limit, a request still in
 * progress or a key conflict (and every 5xx, the platform switch included). A retry may get another answer once
 * the cause is gone, so they are never stored; the key is released instead.
 */
const REFUSALS = new Set<ErrorCode>([
  "unauthorized",
  "forbidden",
  "partner_not_approved",
  "rate_limited",
  "request_in_progress",
  "idempotency_conflict",
  "unavailable",
  // the caller's deadline passed: the RPC was abandoned before it wrote, and the caller has stopped waiting
  "request_timeout",
]);
const TRANSIENT_PG = new Set(["40001", "40P01", "55P03", "57014"]);

export function replay(
  req: UnaryRequest,
  response: Uint8Array | null,
  headers: [string, string][] | null,
  error: StoredError | null,
): UnaryResponse {
  if (error !== null) {
    const code: ErrorCode = error.code in errorCodes ? (error.code as ErrorCode) : "internal";
    throw new AppError(code, error.message, {
      details: error.details,
      headers: { ...error.headers, "idempotency-replayed": "true" },
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    });
  }
  const { header, trailer } = protocolHeadersOf(req);
  for (const [name, value] of headers ?? []) header.set(name, value);
  header.set("idempotency-replayed", "true");
  return {
    stream: false,
    service: req.service,
    method: req.method,
    header,
    trailer,
    message: fromBinary(req.method.output, response ?? new Uint8Array(0)),
  };
}

/**
 * The handler copies a returned response's headers over the ones its protocol prepared, and a replay never
 * reaches the handler, so it brings the protocol's own: the content type answering the request's, and gRPC's
 * OK status trailer. (The router negotiates no compression, so there is no encoding header to repeat.)
 */
function protocolHeadersOf(req: UnaryRequest): { header: Headers; trailer: Headers } {
  const requested = (req.header.get("content-type") ?? "").toLowerCase();
  const json =
    requested.includes("json") ||
    (req.requestMethod === "GET" && new URL(req.url, "http://x").searchParams.get("encoding") === "json");
  for (const grpc of ["application/grpc-web", "application/grpc"]) {
    if (requested.startsWith(grpc))
      return {
        header: new Headers({ "content-type": `${grpc}+${json ? "json" : "proto"}` }),
        trailer: new Headers({ "grpc-status": "0" }),
      };
  }
  return {
    header: new Headers({ "content-type": json ? "application/json" : "application/proto" }),
    trailer: new Headers(),
  };
}

export function storedHeaders(header: Headers): [string, string][] {
  const headers: [string, string][] = [];
  header.forEach((value, name) => {
    if (!NOT_STORED.test(name)) headers.push([name, value]);
  });
  return headers;
}

/** The RPC's own 4xx answer (409, 422, 400, 404) is stored; a refusal or anything else releases the key for a retry. */
export function storable(err: unknown): { error: StoredError; status: number } | undefined {
  if (
    !(err instanceof AppError) ||
    err.httpStatus < 400 ||
    err.httpStatus >= 500 ||
    REFUSALS.has(err.code) ||
    hasTransientCause(err)
  )
    return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(err.headers))
    if (!NOT_STORED.test(name.toLowerCase())) headers[name] = value;
  const error: StoredError = { code: err.code, message: err.message, details: err.details, headers };
  if (err.retryAfterSeconds !== undefined) error.retryAfterSeconds = err.retryAfterSeconds;
  return { error, status: err.httpStatus };
}

/** A conflict mapped from a serialization failure or deadlock is worth a retry, not a stored answer. */
function hasTransientCause(err: AppError): boolean {
  for (let e: unknown = err.cause, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && TRANSIENT_PG.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The REST gateway passes an implementation's answer on as it is, a message or its init shape. */
export function encodeResponse(schema: DescMessage, message: unknown): Uint8Array {
  return toBinary(
    schema,
    isMessage(message, schema) ? message : create(schema, message as MessageInitShape<DescMessage>),
  );
}
