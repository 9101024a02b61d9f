import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from "jose";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { SIGNING_ALG, type KeyStore } from "./keys.ts";

/** Access tokens of both APIs live 15 minutes (spec: `expiresIn` 900). */
const ACCESS_TOKEN_TTL_SECONDS = 900;
const ISSUER = "hotelops";
const AUDIENCE = "hotelops-api";

/**
 * What an access token carries; nothing secret. Staff: `sub` user id, `sid` session id, `pid` active property
 * and `perms`, the role's permissions at issue time (informative for clients: the server decides
 * with the permissions it reads with the session on every request, so a role change acts at once).
 * Clients: `sub` client id and the granted `scope` (space-separated).
 */
type AccessClaims =
  | { kind: "staff"; sub: string; sid: string; pid: string; perms?: string[] }
  | { kind: "partner" | "internal"; sub: string; scope: string };

export interface TokenIssuer {
  /** `maxTtlSeconds` shortens the token (a session ending sooner than 15 minutes); never lengthens it. */
  sign(claims: AccessClaims, maxTtlSeconds?: number): Promise<{ token: string; expiresIn: number }>;
  /** The claims of a valid token, or undefined (bad signature, unknown or retired key, expired, malformed). */
  verify(token: string): Promise<AccessClaims | undefined>;
}

/** Verified tokens kept at most (by insertion; the oldest goes first). */
const VERIFIED_MAX = 10_000;

/**
 * Verifying an ES256 signature costs more than the rest of a small request, and clients send the same token
 * for its whole lifetime, so a verified token is remembered by its exact string until it expires. A hit still
 * needs its key to be non-retired; everything about the caller (client disabled, scopes, session revoked) is
 * read from the database on every request by the auth interceptor, never from this cache.
 */
export function createTokenIssuer(keys: KeyStore, clock: Clock): TokenIssuer {
  const verified = new Map<string, { claims: AccessClaims; kid: string; expiresAtMs: number }>();
  return {
    async sign(claims, maxTtlSeconds = ACCESS_TOKEN_TTL_SECONDS) {
      const { kid, key } = await keys.signingKey();
      const now = Math.floor(clock.now().getTime() / 1000);
      const ttl = Math.max(1, Math.min(ACCESS_TOKEN_TTL_SECONDS, Math.floor(maxTtlSeconds)));
      const token = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "at+jwt" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + ttl)
        .setJti(newId())
        .sign(key);
      return { token, expiresIn: ttl };
    },
    async verify(token) {
      const hit = verified.get(token);
      if (hit !== undefined) {
        if (clock.now().getTime() < hit.expiresAtMs && (await keys.verificationKey(hit.kid)) !== undefined)
          return hit.claims;
        verified.delete(token);
      }
      let kid: string | undefined;
      try {
        kid = decodeProtectedHeader(token).kid;
      } catch {
        return undefined;
      }
      if (kid === undefined) return undefined;
      const key = await keys.verificationKey(kid);
      if (key === undefined) return undefined;
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [SIGNING_ALG],
          issuer: ISSUER,
          audience: AUDIENCE,
          typ: "at+jwt",
          currentDate: clock.now(),
          requiredClaims: ["exp", "iat", "sub"],
        });
        const claims = claimsOf(payload);
        if (claims !== undefined && typeof payload.exp === "number") {
          if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
          verified.set(token, { claims, kid, expiresAtMs: payload.exp * 1000 });
        }
        return claims;
      } catch (err) {
        if (err instanceof errors.JOSEError) return undefined;
        throw err;
      }
    },
  };
}

function claimsOf(p: Record<string, unknown>): AccessClaims | undefined {
  const str = (v: unknown): v is string => typeof v === "string" && v !== "";
  if (!str(p.sub)) return undefined;
  if (p.kind === "staff" && str(p.sid) && str(p.pid)) return { kind: "staff", sub: p.sub, sid: p.sid, pid: p.pid };
  if ((p.kind === "partner" || p.kind === "internal") && typeof p.scope === "string")
    return { kind: p.kind, sub: p.sub, scope: p.scope };
  return undefined;
}
