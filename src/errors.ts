import { Code } from "@connectrpc/connect";

/** One table: every error code the service produces, with its HTTP status and gRPC/Connect code. */
export const errorCodes = {
  invalid_argument: { http: 400, rpc: Code.InvalidArgument },
  validation_failed: { http: 422, rpc: Code.InvalidArgument },
  unauthorized: { http: 401, rpc: Code.Unauthenticated },
  forbidden: { http: 403, rpc: Code.PermissionDenied },
  partner_not_approved: { http: 403, rpc: Code.PermissionDenied },
  email_verification_required: { http: 403, rpc: Code.PermissionDenied },
  not_found: { http: 404, rpc: Code.NotFound },
  method_not_allowed: { http: 405, rpc: Code.Unimplemented },
  conflict: { http: 409, rpc: Code.FailedPrecondition },
  idempotency_conflict: { http: 409, rpc: Code.FailedPrecondition },
  request_in_progress: { http: 409, rpc: Code.Aborted },
  no_availability: { http: 409, rpc: Code.FailedPrecondition },
  sold_out: { http: 409, rpc: Code.FailedPrecondition },
  restricted: { http: 409, rpc: Code.FailedPrecondition },
  invalid_transition: { http: 409, rpc: Code.FailedPrecondition },
  business_date_moved: { http: 409, rpc: Code.FailedPrecondition },
  request_timeout: { http: 408, rpc: Code.DeadlineExceeded },
  payload_too_large: { http: 413, rpc: Code.ResourceExhausted },
  unsupported_media_type: { http: 415, rpc: Code.InvalidArgument },
  rate_limited: { http: 429, rpc: Code.ResourceExhausted },
  /** A stream's reader fell too far behind (it resumes by cursor). */
  reader_too_slow: { http: 429, rpc: Code.ResourceExhausted },
  headers_too_large: { http: 431, rpc: Code.ResourceExhausted },
  unavailable: { http: 503, rpc: Code.Unavailable },
  internal: { http: 500, rpc: Code.Internal },
} as const satisfies Record<string, { http: number; rpc: Code }>;

export type ErrorCode = keyof typeof errorCodes;

export interface FieldViolation {
  field: string;
  reason: string;
}

export interface AppErrorOptions {
  details?: FieldViolation[];
  /** Seconds after which a retry may succeed (429, 503). */
  retryAfterSeconds?: number;
  /** Extra response headers the transport should send with the error (e.g. WWW-Authenticate). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** Field violations an error lists at most; more are counted in one last entry `{field: "", reason: "N more ..."}`. */
const MAX_ERROR_DETAILS = 20;
/** Characters of a field name, a reason or a message kept in an error answer (each bad key is the caller's text). */
const MAX_DETAIL_CHARS = 200;
const MAX_MESSAGE_CHARS = 1000;

const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
const MORE = /^\d+ more problems? not listed$/;

/**
 * An error answer never grows with the request: at most MAX_ERROR_DETAILS violations, each clipped, and a count
 * of the rest. Idempotent, so an error re-wrapped by an interceptor keeps its list as it was.
 */
function capDetails(details: FieldViolation[]): FieldViolation[] {
  const last = details.at(-1);
  const counted = details.length === MAX_ERROR_DETAILS + 1 && last?.field === "" && MORE.test(last.reason);
  const kept = details
    .slice(0, MAX_ERROR_DETAILS)
    .map((d) => ({ field: clip(d.field, MAX_DETAIL_CHARS), reason: clip(d.reason, MAX_DETAIL_CHARS) }));
  if (counted) return [...kept, last];
  const more = details.length - kept.length;
  return more > 0 ? [...kept, { field: "", reason: `${more} more problem${more === 1 ? "" : "s"} not listed` }] : kept;
}

/** The one error type of the service. Domain code throws it; transports map `code` once, through `errorCodes`. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldViolation[];
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(clip(message, MAX_MESSAGE_CHARS), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details === undefined ? [] : capDetails(options.details);
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  get httpStatus(): number {
    return errorCodes[this.code].http;
  }
}

/** Shorthand for the most common case: one invalid field. */
export function invalidField(field: string, reason: string, code: ErrorCode = "invalid_argument"): AppError {
  return new AppError(code, `${field}: ${reason}`, { details: [{ field, reason }] });
}

/** PostgreSQL error codes that are a caller's conflict rather than our bug. */
const pgConflicts: Record<string, ErrorCode> = {
  "23505": "conflict", // unique_violation
  "23P01": "conflict", // exclusion_violation
  "40001": "conflict", // serialization_failure
  "40P01": "conflict", // deadlock_detected
};

/** Turns anything thrown into an AppError; unknown errors become `internal` with no internals exposed. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const pgCode = findPgCode(err);
  if (pgCode !== undefined) {
    const code = pgConflicts[pgCode];
    if (code !== undefined)
      return new AppError(code, "The operation conflicts with a concurrent change; retry it.", { cause: err });
  }
  if (isDatabaseUnavailable(err, pgCode))
    return new AppError("unavailable", "The database is unavailable; retry shortly.", {
      cause: err,
      retryAfterSeconds: 5,
    });
  return new AppError("internal", "Internal error.", { cause: err });
}

/**
 * The database cannot be reached (refused, reset, shut down, starting, out of connections, a connect timeout):
 * the caller gets 503 with Retry-After instead of a 500, and nothing it was told committed is affected.
 */
function isDatabaseUnavailable(err: unknown, pgCode: string | undefined): boolean {
  if (pgCode !== undefined && (/^(08|57P)/.test(pgCode) || pgCode === "53300")) return true;
  for (let e: unknown = err, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (
      typeof code === "string" &&
      ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"].includes(code)
    )
      return true;
    if (
      typeof message === "string" &&
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(
        message,
      )
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function findPgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
