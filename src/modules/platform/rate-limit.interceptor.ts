import { createHash } from "node:crypto";
import type pg from "pg";
import type { DescMethod } from "@bufbuild/protobuf";
import { ConnectError, type Interceptor, type UnaryRequest, type StreamRequest } from "@connectrpc/connect";
import { AppError, toAppError } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { scoped } from "../../server/calls.ts";
import { callInfoKey } from "../../server/context.ts";
import { principalKey } from "../auth/index.ts";
import type { Count, Hit, RateLimitRepository } from "./rate-limit.repository.ts";
import { policyOf, type RateLimitClass } from "./policy.rpc.ts";
import { limitTokenRequest, type TokenLimits } from "./token-limit.ts";

export interface RateLimits {
  /** Per staff session per minute. */
  staffPerMinute: number;
  /** Per client IP per minute, for callers without a principal. */
  anonPerMinute: number;
  /** Per client IP and per account per minute, for the "auth" class. */
  authPerMinute: number;
  /** Per client per minute when its api_clients row has none (the column default). */
  clientDefaultPerMinute?: number;
  /** The token endpoint's own limits (class "token"); defaults: 30 tokens per client, 20 failures per IP and client id. */
  token?: TokenLimits;
}

export interface RateLimitOptions {
  repository: RateLimitRepository;
  /** The database of the token endpoint's counters (class "token"). */
  pool?: pg.Pool;
  clock: Clock;
  limits: RateLimits;
  logger: Logger;
  /** Overrides the class read from the RPC's RestOptions (benchmarks). */
  classOf?: (method: DescMethod) => RateLimitClass;
  /**
   * Counts a single-bucket call in a statement of its own instead, when it returns a hit: the idempotency claim of
   * a keyed write counts the call and claims its key in one round trip (Idempotency.countWith).
   */
  countWith?: (req: UnaryRequest | StreamRequest, count: Count) => Promise<Hit> | undefined;
}

const WINDOW_MS = 60_000;
/** Request fields naming the account a login-like RPC is about (proto names). */
const ACCOUNT_FIELDS = ["email", "username", "client_id"];

interface Plan {
  buckets: string[];
  /** The limit of each bucket; a client's comes from the database in the same statement. */
  limit: number;
  clientId?: string;
}

/**
 * Fixed one-minute windows counted in PostgreSQL (one upsert per request), so the limits hold across every
 * process sharing the database. Buckets: the client, the staff session, or the client IP for anonymous calls;
 * "auth" RPCs count per IP and per account with a strict limit. Every limited response carries RateLimit-*.
 */
export function createRateLimitInterceptor(opts: RateLimitOptions): Interceptor {
  const clientDefault = opts.limits.clientDefaultPerMinute ?? 600;
  const classOf = (method: DescMethod): RateLimitClass => opts.classOf?.(method) ?? policyOf(method).rateLimitClass;
  const interceptor: Interceptor = (next) => async (req) => {
    const cls = classOf(req.method);
    if (cls === "token" && opts.pool !== undefined) {
      return limitTokenRequest(
        opts.pool,
        opts.limits.token ?? { perClientPerMinute: 30, failuresPerMinute: 20 },
        opts.clock.now().getTime(),
        req,
        rawAccountOf(req),
        () => next(req),
      );
    }
    const plan = planOf(cls, req, opts.limits);
    const nowMs = opts.clock.now().getTime();
    const windowStartMs = nowMs - (nowMs % WINDOW_MS);
    const windowStart = new Date(windowStartMs);
    let hit: Hit;
    try {
      const counted =
        plan.buckets.length === 1
          ? opts.countWith?.(req, {
              bucket: plan.buckets[0]!,
              windowStart,
              clientId: plan.clientId,
              limit: plan.clientId !== undefined ? clientDefault : plan.limit,
            })
          : undefined;
      hit = await (counted ?? opts.repository.hit(plan.buckets, windowStart, plan.clientId));
    } catch (err) {
      // Fail open: a counter that cannot be written must not take the API down with it.
      opts.logger.warn({ err, rpc: `${req.service.typeName}/${req.method.name}` }, "rate limit not counted");
      return next(req);
    }
    const limit = plan.clientId !== undefined ? (hit.clientLimit ?? clientDefault) : plan.limit;
    let remaining = limit;
    for (const count of hit.counts.values()) remaining = Math.min(remaining, limit - count);
    const reset = Math.max(1, Math.ceil((windowStartMs + WINDOW_MS - nowMs) / 1000));
    const headers = {
      "ratelimit-limit": String(limit),
      "ratelimit-remaining": String(Math.max(0, remaining)),
      "ratelimit-reset": String(reset),
    };
    if (remaining < 0) {
      throw new AppError("rate_limited", `Rate limit of ${limit} requests per minute exceeded; retry in ${reset} s.`, {
        retryAfterSeconds: reset,
        headers,
      });
    }
    let res;
    try {
      res = await next(req);
    } catch (err) {
      throw withHeaders(err, headers);
    }
    for (const [name, value] of Object.entries(headers)) res.header.set(name, value);
    return res;
  };
  return scoped((method) => classOf(method) !== "none", interceptor);
}

function planOf(cls: RateLimitClass, req: UnaryRequest | StreamRequest, limits: RateLimits): Plan {
  const ip = req.contextValues.get(callInfoKey)?.remoteAddress || "unknown";
  if (cls === "auth" || cls === "token") {
    const buckets = [`auth-ip:${ip}`];
    const account = accountOf(req);
    if (account !== undefined) buckets.push(`auth-account:${account}`);
    return { buckets, limit: limits.authPerMinute };
  }
  const principal = req.contextValues.get(principalKey);
  if (principal === undefined) return { buckets: [`ip:${ip}`], limit: limits.anonPerMinute };
  if (principal.kind === "staff") return { buckets: [`session:${principal.sessionId}`], limit: limits.staffPerMinute };
  return { buckets: [`client:${principal.clientId}`], limit: 0, clientId: principal.clientId };
}

/** The account a login-like request names (body field or Basic user), hashed: no e-mail addresses in the table. */
function accountOf(req: UnaryRequest | StreamRequest): string | undefined {
  const account = rawAccountOf(req);
  if (account === undefined) return undefined;
  return createHash("sha256").update(account.trim().toLowerCase()).digest("base64url").slice(0, 22);
}

/** The account a login-like request names: a body field (email, username, client_id) or the Basic user. */
function rawAccountOf(req: UnaryRequest | StreamRequest): string | undefined {
  let account: string | undefined;
  if (!req.stream) {
    const message = req.message as unknown as Record<string, unknown>;
    for (const name of ACCOUNT_FIELDS) {
      const field = req.method.input.fields.find((f) => f.name === name);
      const value = field === undefined ? undefined : message[field.localName];
      if (typeof value === "string" && value.trim() !== "") {
        account = value;
        break;
      }
    }
  }
  const authorization = req.header.get("authorization");
  if (account === undefined && authorization !== null && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
    const user = decoded.slice(0, Math.max(0, decoded.indexOf(":")));
    if (user !== "") account = safeDecode(user);
  }
  return account;
}

/** RFC 6749 section 2.3.1 form-encodes the Basic credentials; a malformed escape stays as sent. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return value;
  }
}

/** The limit headers go out with errors too (a copy: a thrown AppError may be a shared instance). */
function withHeaders(err: unknown, headers: Record<string, string>): unknown {
  if (err instanceof ConnectError) {
    for (const [name, value] of Object.entries(headers)) err.metadata.set(name, value);
    return err;
  }
  const app = toAppError(err);
  return new AppError(app.code, app.message, {
    details: app.details,
    headers: { ...app.headers, ...headers },
    cause: app.cause ?? err,
    ...(app.retryAfterSeconds !== undefined ? { retryAfterSeconds: app.retryAfterSeconds } : {}),
  });
}
