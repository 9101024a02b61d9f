import type { Route } from "../gateway/index.ts";

/** What each error status means on the REST faces (the one table in src/errors.ts). */
const STATUSES: Record<string, string> = {
  "400": "Invalid request data (`invalid_argument`); `details` names the fields.",
  "401": "Missing, invalid or expired credentials (`unauthorized`), with `WWW-Authenticate`.",
  "403": "Authenticated but not allowed (`forbidden`, `partner_not_approved`).",
  "404": "No such record in the caller's property (`not_found`); another property's record is 404 too.",
  "409": "Conflict with the current state (`conflict`, `idempotency_conflict`, `request_in_progress`, ...).",
  "413": "Request body too large (`payload_too_large`).",
  "415": "Content-Type not accepted (`unsupported_media_type`).",
  "422": "Well-formed but invalid data (`validation_failed`).",
  "429": "Rate limit exceeded (`rate_limited`); retry after `Retry-After` seconds.",
  "500": "Unexpected failure (`internal`); no internals are disclosed.",
  "503": "Temporarily unavailable (`unavailable`), e.g. the partner API is switched off.",
};

/** The error statuses an operation can answer with. */
export function errorResponsesFor(route: Route, write: boolean, isPublic: boolean): Record<string, unknown> {
  const codes = ["400"];
  if (!isPublic) codes.push("401", "403");
  else if (route.rest.errorStyle === "oauth2") codes.push("401");
  if (route.template.fields.length > 0) codes.push("404");
  if (write) codes.push("409", "422");
  if (route.body !== "") codes.push("413", "415");
  if (route.rest.rateLimitClass !== "none") codes.push("429");
  codes.push("500", "503");
  const prefix = route.rest.errorStyle === "oauth2" ? "OAuthError" : "Error";
  return Object.fromEntries(codes.sort().map((c) => [c, { $ref: `#/components/responses/${prefix}${c}` }]));
}

export function errorResponseComponents(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(STATUSES)) {
    const headers: Record<string, unknown> = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
    if (status === "429") {
      headers["Retry-After"] = { $ref: "#/components/headers/Retry-After" };
      for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) headers[h] = { $ref: `#/components/headers/${h}` };
    }
    if (status === "401") headers["WWW-Authenticate"] = { $ref: "#/components/headers/WWW-Authenticate" };
    out[`Error${status}`] = { description, headers, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } } };
    out[`OAuthError${status}`] = {
      description: status === "401" ? "Client authentication failed (`invalid_client`), with `WWW-Authenticate: Basic`." : status === "400" ? "RFC 6749 section 5.2 error (`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`)." : description,
      headers,
      content: { "application/json": { schema: { $ref: "#/components/schemas/OAuthErrorResponse" } } },
    };
  }
  return out;
}

/** The common error body and the RFC 6749 error body of the token endpoint. */
export function errorComponents(codes: readonly string[]): Record<string, unknown> {
  return {
    ErrorResponse: {
      type: "object",
      description: "The error body of every REST endpoint except the OAuth token endpoint.",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message", "requestId"],
          properties: {
            code: { type: "string", description: "snake_case error code; the same value travels in gRPC/Connect error details.", examples: ["not_found"], enum: [...codes].sort() },
            message: { type: "string", description: "Human-readable text; do not parse." },
            requestId: { type: "string", description: "The X-Request-Id of the call." },
            details: { type: "array", items: { $ref: "#/components/schemas/ErrorDetail" } },
          },
        },
      },
    },
    ErrorDetail: {
      type: "object",
      required: ["field", "reason"],
      properties: {
        field: { type: "string", description: "lowerCamelCase field path, e.g. `arrivalDate` or `rooms[0].adults`.", examples: ["arrivalDate"] },
        reason: { type: "string" },
      },
    },
    OAuthErrorResponse: {
      type: "object",
      description: "RFC 6749 section 5.2 error body of `POST /api/v1/oauth/token`.",
      required: ["error", "error_description"],
      properties: {
        error: { type: "string", enum: ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"] },
        error_description: { type: "string" },
      },
    },
  };
}

export function headerComponents(): Record<string, unknown> {
  const int = { type: "integer", minimum: 0 };
  return {
    "X-Request-Id": { description: "The request id (a valid incoming `X-Request-Id` is echoed, else one is generated).", schema: { type: "string" } },
    "RateLimit-Limit": { description: "Requests allowed in the current window.", schema: int },
    "RateLimit-Remaining": { description: "Requests left in the current window.", schema: int },
    "RateLimit-Reset": { description: "Seconds until the window resets.", schema: int },
    "Retry-After": { description: "Seconds to wait before retrying.", schema: int },
    "WWW-Authenticate": { description: "The authentication scheme to use (`Bearer`, or `Basic` on the token endpoint).", schema: { type: "string" } },
    "Idempotency-Replayed": { description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
  };
}

const SCOPES: Record<string, string> = {
  "availability.read": "Read availability of the client's properties.",
  "reservations.read": "Read reservations of the client's properties.",
  "reservations.write": "Send reservation events.",
  "mappings.read": "Read the client's provider code mappings.",
};

export function securitySchemes(scopes: readonly string[]): Record<string, unknown> {
  return {
    bearerAuth: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "Access token of a staff session (`POST /api/mobile/v1/auth/login`, refreshed with `/auth/refresh`) or of a client (`POST /api/v1/oauth/token`), as `Authorization: Bearer <token>`.",
    },
    clientCredentials: {
      type: "oauth2",
      description: "OAuth 2.0 client credentials (RFC 6749 section 4.4) for partner and internal clients; tokens live 15 minutes.",
      flows: { clientCredentials: { tokenUrl: "/api/v1/oauth/token", scopes: Object.fromEntries(scopes.map((s) => [s, SCOPES[s] ?? s])) } },
    },
  };
}
