import { createHash } from "node:crypto";
import type { UnaryRequest, StreamRequest, UnaryResponse, StreamResponse } from "@connectrpc/connect";
import type pg from "pg";
import { AppError, toAppError } from "../../errors.ts";
import { callInfoKey } from "../../server/context.ts";
import { clientLimitSql } from "../auth/index.ts";
import { runQuery } from "../../db/queryable.ts";

/** Limits of the token endpoint (rate_limit_class "token"), apart from staff login's "auth" class. */
export interface TokenLimits {
  /** Successful token requests per client per minute when api_clients.token_requests_per_minute is null. */
  perClientPerMinute: number;
  /** Failed authentications per minute, per client IP and per client id. */
  failuresPerMinute: number;
}

/** The error code a 429 of the token endpoint carries in its RFC 6749 body: a retryable condition, not a caller bug. */
const TOKEN_RATE_LIMITED_ERROR = "temporarily_unavailable";

const WINDOW_MS = 60_000;
const PEEK = {
  name: "rl_token_peek",
  text: `select coalesce((select count from rate_limits where bucket = $1 and window_start = $4), 0) as ip_failures,
                coalesce((select count from rate_limits where bucket = $2 and window_start = $4), 0) as client_failures,
                coalesce((select count from rate_limits where bucket = $3 and window_start = $4), 0) as client_tokens,
                ${clientLimitSql("tokens", "$5")} as client_limit`,
};
const COUNT = {
  name: "rl_token_count",
  text: "insert into rate_limits (bucket, window_start, count) select b, $2, 1 from unnest($1::text[]) as b order by b on conflict (bucket, window_start) do update set count = rate_limits.count + 1",
};

const hashed = (value: string) => createHash("sha256").update(value).digest("base64url").slice(0, 22);

/**
 * Many partner clients may share one egress IP, so the token endpoint does not count requests per IP: it counts
 * successful token requests per client (default or the client's own limit) and FAILED authentications per IP and
 * per client id (guessing secrets). The counts are read before the call and written after it, by its outcome;
 * a burst of concurrent calls may pass a limit by its own size. Over a limit: 429 with Retry-After and the RFC
 * 6749 body {"error":"temporarily_unavailable"} (OAuth libraries treat invalid_request as a bug, not a wait).
 */
export async function limitTokenRequest<R extends UnaryResponse | StreamResponse>(
  pool: pg.Pool,
  limits: TokenLimits,
  nowMs: number,
  req: UnaryRequest | StreamRequest,
  clientId: string | undefined,
  next: () => Promise<R>,
): Promise<R> {
  const windowStartMs = nowMs - (nowMs % WINDOW_MS);
  const windowStart = new Date(windowStartMs);
  const reset = Math.max(1, Math.ceil((windowStartMs + WINDOW_MS - nowMs) / 1000));
  const ip = req.contextValues.get(callInfoKey)?.remoteAddress || "unknown";
  const buckets = {
    ip: `token-fail-ip:${ip}`,
    clientFail: `token-fail-client:${hashed(clientId ?? "")}`,
    client: `token-client:${hashed(clientId ?? "")}`,
  };
  const id = clientId !== undefined && clientId.length <= 200 ? clientId : null;
  let peek;
  try {
    peek = (
      await pool.query<{
        ip_failures: number;
        client_failures: number;
        client_tokens: number;
        client_limit: number | null;
      }>({ ...PEEK, values: [buckets.ip, buckets.clientFail, buckets.client, windowStart, id] })
    ).rows[0]!;
  } catch {
    return next(); // fail open, like every other limit: a counter that cannot be read must not stop token issuing
  }
  const clientLimit = peek.client_limit ?? limits.perClientPerMinute;
  const limited = (limit: number, what: string) =>
    new AppError("rate_limited", `Too many ${what}; retry in ${reset} s.`, {
      retryAfterSeconds: reset,
      headers: {
        "x-oauth-error": TOKEN_RATE_LIMITED_ERROR,
        "ratelimit-limit": String(limit),
        "ratelimit-remaining": "0",
        "ratelimit-reset": String(reset),
      },
    });
  if (peek.ip_failures >= limits.failuresPerMinute)
    throw limited(limits.failuresPerMinute, "failed client authentications from this address");
  if (clientId !== undefined && peek.client_failures >= limits.failuresPerMinute)
    throw limited(limits.failuresPerMinute, "failed authentications of this client");
  if (clientId !== undefined && peek.client_tokens >= clientLimit)
    throw limited(clientLimit, "token requests of this client");
  const headers = (used: number) => ({
    "ratelimit-limit": String(clientLimit),
    "ratelimit-remaining": String(Math.max(0, clientLimit - used)),
    "ratelimit-reset": String(reset),
  });
  let res: R;
  try {
    res = await next();
  } catch (err) {
    const app = toAppError(err);
    // Failed authentication (or no usable credentials): counted per IP and per client id. A request that did
    // authenticate but asked for something wrong (scope, grant type) counts for its client like a success.
    const failed = app.code === "unauthorized" || app.headers["x-oauth-error"] === "invalid_request";
    await runQuery(pool, COUNT, [
      failed ? [buckets.ip, ...(clientId !== undefined ? [buckets.clientFail] : [])] : [buckets.client],
      windowStart,
    ]).catch(() => undefined);
    // A failure reports the failure budget left (the tighter of the IP's and the client id's); else the client's.
    const used = Math.max(peek.ip_failures, clientId !== undefined ? peek.client_failures : 0) + 1;
    const limitHeaders = failed
      ? {
          "ratelimit-limit": String(limits.failuresPerMinute),
          "ratelimit-remaining": String(Math.max(0, limits.failuresPerMinute - used)),
          "ratelimit-reset": String(reset),
        }
      : headers(peek.client_tokens + 1);
    throw new AppError(app.code, app.message, {
      details: app.details,
      headers: { ...app.headers, ...limitHeaders },
      ...(app.retryAfterSeconds !== undefined ? { retryAfterSeconds: app.retryAfterSeconds } : {}),
      cause: app.cause ?? err,
    });
  }
  await runQuery(pool, COUNT, [[buckets.client], windowStart]).catch(() => undefined);
  for (const [name, value] of Object.entries(headers(peek.client_tokens + 1))) res.header.set(name, value);
  return res;
}
