import type { DescMessage } from "@bufbuild/protobuf";
import { PrincipalKind } from "../../gen/hotelops/auth/v1/rule_pb.js";
import type { Route } from "../gateway/index.ts";
import { fieldDoc } from "./field-doc.ts";

/** What each error status means on the REST faces. */
const STATUSES: Record<string, string> = {
  "400": "Invalid request data (`invalid_argument`); `details` names the fields.",
  "401": "Missing, invalid or expired credentials (`unauthorized`), with `WWW-Authenticate`.",
  "403": "Authenticated but not allowed (`forbidden`, `partner_not_approved`).",
  "404": "No such record in the caller's property (`not_found`); another property's record is 404 too.",
  "409": "Conflict with the current state (`conflict`, `idempotency_conflict`, `request_in_progress`, ...).",
  "413": "Request body too large, as sent or once decompressed (`payload_too_large`).",
  "415": "Content-Type or Content-Encoding not accepted (`unsupported_media_type`).",
  "422": "Well-formed but invalid data (`validation_failed`).",
  "429": "Rate limit exceeded (`rate_limited`); retry after `Retry-After` seconds.",
  "500": "Unexpected failure (`internal`); no internals are disclosed.",
  "503": "Temporarily unavailable (`unavailable`), e.g. the partner API is switched off.",
};

/** The error statuses an operation can answer with. */
export function errorResponsesFor(route: Route, write: boolean, isPublic: boolean): Record<string, unknown> {
  const codes = ["400"];
  if (!isPublic) codes.push("401", "403");
  // public sign-in calls answer 401 for wrong credentials, codes and refresh tokens
  else if (route.rest.errorStyle === "oauth2" || route.rest.rateLimitClass === "auth") codes.push("401");
  if (route.template.fields.length > 0 || refersToRecords(route.method.input)) codes.push("404");
  if (write) codes.push("409", "422");
  if (route.body !== "") codes.push("413", "415");
  if (route.rest.rateLimitClass !== "none") codes.push("429");
  codes.push("500", "503");
  const prefix = route.rest.errorStyle === "oauth2" ? "OAuthError" : "Error";
  return Object.fromEntries(codes.sort().map((c) => [c, { $ref: `#/components/responses/${prefix}${c}` }]));
}

/**
 * A request naming records by id (a field named so, or documented as a uuid) or a property by code answers 404 for
 * one out of the caller's reach.
 */
function refersToRecords(desc: DescMessage, depth = 0): boolean {
  return desc.fields.some(
    (f) =>
      /(_id|_ids|^property_code|^property_codes)$/.test(f.name) ||
      fieldDoc(f).format === "uuid" || (depth < 2 && f.message !== undefined && !f.message.typeName.startsWith("google.") && refersToRecords(f.message, depth + 1)),
  );
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
      description:
        status === "401"
          ? "Client authentication failed (`invalid_client`), with `WWW-Authenticate: Basic`."
          : status === "400"
            ? "RFC 6749 section 5.2 error (`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`)."
            : status === "429"
              ? "Too many token requests of this client, or failed authentications of this IP or client id: `temporarily_unavailable` (retry after `Retry-After` seconds; not `invalid_request`)."
              : description,
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
        error: { type: "string", enum: ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "temporarily_unavailable"] },
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
  admin: "Operator functions (internal clients only).",
  "events.read": "Stream the domain events of the client's properties (internal clients only; gRPC/Connect).",
};

/** The Idempotency-Key header; a required one is spelled out whole (a `required` beside a $ref is ignored). */
export function idempotencyKeyParameter(required: boolean, stored = true): Record<string, unknown> {
  return {
    name: "Idempotency-Key",
    in: "header",
    ...(required ? { required: true } : {}),
    description: stored
      ? `${required ? "Required. " : ""}1-255 visible ASCII characters, e.g. a UUID per business operation. The same key, caller and body replays the first response (\`Idempotency-Replayed: true\`); the same key with another body is 409 \`idempotency_conflict\`. Keys are kept at least 24 hours.`
      : "1-255 visible ASCII characters (anything else is 400 `invalid_argument`). Not stored: this answer carries secrets or personal data and is never replayed, so a retry runs the operation again.",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
    example: "6f1c2a7e-3b9d-4e51-a0c4-9d2f8b7e1a33",
  };
}

/**
 * Which credentials an operation takes, one scheme per kind of caller, so "Try it out" sends a staff token to
 * staff operations and a client token to client operations.
 */
export function securityOf(who: readonly PrincipalKind[], scope: string): Record<string, string[]>[] {
  const security: Record<string, string[]>[] = [];
  if (who.includes(PrincipalKind.STAFF)) security.push({ staffSession: [] });
  if (who.includes(PrincipalKind.PARTNER) || who.includes(PrincipalKind.INTERNAL)) security.push({ clientCredentials: scope === "" ? [] : [scope] }, { clientToken: [] });
  return security;
}

export function securitySchemes(scopes: readonly string[]): Record<string, unknown> {
  return {
    staffSession: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "Staff (Mobile API and Panel): `tokens.accessToken` from `POST /api/mobile/v1/auth/login` (or `/auth/verify`), refreshed with `/auth/refresh`; sent as `Authorization: Bearer <token>`.",
    },
    clientToken: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "Partner and internal clients: an `access_token` you already have from `POST /api/v1/oauth/token`; sent as `Authorization: Bearer <token>`.",
    },
    clientCredentials: {
      type: "oauth2",
      description: "OAuth 2.0 client credentials (RFC 6749 section 4.4) for partner and internal clients; tokens live 15 minutes.",
      flows: { clientCredentials: { tokenUrl: "/api/v1/oauth/token", scopes: Object.fromEntries(scopes.map((s) => [s, SCOPES[s] ?? s])) } },
    },
  };
}
