import { runQuery } from "../../db/queryable.ts";
import type pg from "pg";
import { AppError } from "../../errors.ts";
import { isUnstorableText } from "../../lib/text.ts";
import { clientCredentials, markTokenIssued, type ClientCredentials } from "./clients.repository.ts";
import { burnVerify, verifySecret } from "./passwords.ts";
import type { TokenIssuer } from "./tokens.ts";
import type { Clock } from "../../lib/clock.ts";

/** RFC 6749 section 5.2 error codes; the gateway's oauth2 error style reads them from `x-oauth-error`. */
type OAuthError =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope";

function oauthError(error: OAuthError, description: string): AppError {
  if (error === "invalid_client") {
    return new AppError("unauthorized", description, {
      headers: { "x-oauth-error": error, "www-authenticate": 'Basic realm="hotelops", charset="UTF-8"' },
    });
  }
  return new AppError("invalid_argument", description, { headers: { "x-oauth-error": error } });
}

interface TokenRequest {
  /** The Authorization header as received, if any. */
  authorization: string | null;
  grantType: string;
  scope: string;
  clientId: string;
  clientSecret: string;
}

interface TokenResponse {
  accessToken: string;
  tokenType: "Bearer";
  expiresIn: number;
  scope: string;
}

export interface ClientTokenService {
  /** The client credentials grant (RFC 6749 section 4.4). */
  createToken(req: TokenRequest): Promise<TokenResponse>;
}

// RFC 6749 appendix A.4: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const scopeToken = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * While the partner API is switched off: a retryable condition in RFC 6749 terms (`temporarily_unavailable`),
 * not a caller bug, with Retry-After.
 */
const partnerApiOff = (): AppError =>
  new AppError("unavailable", "The partner API is switched off platform-wide; see GET /api/v1/status.", {
    retryAfterSeconds: 300,
    headers: { "x-oauth-error": "temporarily_unavailable" },
  });

export function createClientTokenService(deps: {
  pool: pg.Pool;
  tokens: TokenIssuer;
  clock: Clock;
  /** The platform-wide partner API switch (owned by the platform module). */
  partnerApiEnabled: () => Promise<boolean>;
}): ClientTokenService {
  return {
    async createToken(req) {
      const basic = parseBasic(req.authorization);
      // Switched off, only an internal client (the admin API's) gets a token, so an operator can switch it back
      // on over the admin API; partners are refused before any password hashing.
      if (!(await deps.partnerApiEnabled())) {
        const id = basic?.id ?? req.clientId;
        const kind =
          id !== "" && id.length <= 200
            ? (await runQuery<ClientCredentials>(deps.pool, clientCredentials, [id])).rows[0]?.kind
            : undefined;
        if (kind !== "internal") throw partnerApiOff();
      }
      if (basic !== undefined && (req.clientId !== "" || req.clientSecret !== "")) {
        throw oauthError(
          "invalid_request",
          "Use one client authentication method: HTTP Basic or client_id/client_secret in the body, not both.",
        );
      }
      if (req.grantType === "") throw oauthError("invalid_request", "grant_type is required.");
      const credentials =
        basic ??
        (req.clientId !== "" || req.clientSecret !== "" ? { id: req.clientId, secret: req.clientSecret } : undefined);
      if (credentials === undefined)
        throw oauthError("invalid_client", "Client authentication is required (HTTP Basic).");
      if (credentials.id === "" || credentials.secret === "")
        throw oauthError("invalid_client", "Client authentication failed.");

      const client = await authenticate(deps.pool, credentials.id, credentials.secret);
      if (req.grantType !== "client_credentials")
        throw oauthError("unsupported_grant_type", "Only grant_type=client_credentials is supported.");

      let granted = client.scopes;
      if (req.scope.trim() !== "") {
        const asked = [...new Set(req.scope.split(" ").filter((s) => s !== ""))];
        const bad = asked.filter((s) => !scopeToken.test(s) || !client.scopes.includes(s));
        if (bad.length > 0) throw oauthError("invalid_scope", `Scope not granted to this client: ${bad.join(" ")}.`);
        granted = asked;
      }
      if (client.kind === "partner" && client.propertyIds.length === 0) {
        throw oauthError("invalid_grant", "The client has no active property.");
      }
      const scope = granted.join(" ");
      const access = await deps.tokens.sign({ kind: client.kind, sub: client.id, scope });
      // shown on the panel's API access page (the argon2 verify above costs far more than this update)
      await markTokenIssued(deps.pool, client.id, deps.clock.now());
      return { accessToken: access.token, tokenType: "Bearer", expiresIn: access.expiresIn, scope };
    },
  };
}

/** An unknown client costs as much time as a wrong secret, so timing does not reveal which ids exist. */
async function authenticate(pool: pg.Pool, id: string, secret: string): Promise<ClientCredentials> {
  const client =
    id.length <= 200 ? (await runQuery<ClientCredentials>(pool, clientCredentials, [id])).rows[0] : undefined;
  const ok = client === undefined ? await burnVerify(secret) : await verifySecret(client.secretHash, secret);
  if (client === undefined || !ok || !client.active)
    throw oauthError("invalid_client", "Client authentication failed.");
  return client;
}

/** `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 section 2.3.1); undefined without a Basic header. */
export function parseBasic(header: string | null): { id: string; secret: string } | undefined {
  if (header === null || header === "") return undefined;
  const space = header.indexOf(" ");
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== "basic")
    throw oauthError("invalid_client", "Client authentication must use the Basic scheme.");
  const encoded = header.slice(space + 1).trim();
  if (space === -1 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded))
    throw oauthError("invalid_client", "Malformed Basic credentials.");
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) throw oauthError("invalid_client", "Malformed Basic credentials.");
  let credentials: { id: string; secret: string };
  try {
    credentials = { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw oauthError("invalid_client", "Malformed Basic credentials.");
  }
  if (isUnstorableText(credentials.id) || isUnstorableText(credentials.secret)) {
    throw new AppError("invalid_argument", "Basic credentials contain a NUL character or an unpaired surrogate.", {
      headers: { "x-oauth-error": "invalid_request" },
    });
  }
  return credentials;
}

function formDecode(s: string): string {
  return decodeURIComponent(s.replaceAll("+", " "));
}
