import { cors as connectCors } from "@connectrpc/connect";
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { AppError } from "../errors.ts";
import { send, writeError, type NodeResponse } from "./http-errors.ts";

/**
 * Which browser origins may call the API: a list of exact origins (`https://app.example.com`), `"*"` for any,
 * or `"loopback"` for any port of http(s)://localhost, 127.0.0.1 and [::1] (the development default).
 */
export type CorsOrigins = readonly string[];

/**
 * Request headers a browser may send: ours, W3C trace context (browser OpenTelemetry adds `traceparent` and
 * `tracestate` to every call), and those of the Connect and gRPC-Web protocols.
 */
const corsAllowedHeaders = [
  ...new Set([
    "Authorization",
    "Idempotency-Key",
    "X-Request-Id",
    "If-None-Match",
    "traceparent",
    "tracestate",
    ...connectCors.allowedHeaders,
  ]),
];
/** Response headers a page may read: ours plus grpc-status/grpc-message and the other protocol headers. */
const corsExposedHeaders = [
  ...new Set([
    "X-Request-Id",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "Retry-After",
    "Idempotency-Replayed",
    "WWW-Authenticate",
    "ETag",
    ...connectCors.exposedHeaders,
  ]),
];
const allowedMethods = "GET, POST, PUT, PATCH, DELETE";
const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/** An origin as browsers send it: scheme, host and an optional port, nothing else. */
export function isOrigin(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.origin === value;
  } catch {
    return false;
  }
}

export interface Cors {
  /**
   * Adds the CORS headers of an allowed origin to `res`. Answers a preflight itself (204, or 403 with our error
   * body for an origin not on the list) and then returns true: the request is done.
   */
  handle(req: IncomingMessage | Http2ServerRequest, res: NodeResponse, requestId: string): boolean;
}

export function createCors(origins: CorsOrigins): Cors {
  const exact = new Set(origins.filter(isOrigin));
  const any = origins.includes("*");
  const loopback = origins.includes("loopback");
  const allowed = (origin: string): boolean => any || exact.has(origin) || (loopback && LOOPBACK.test(origin));
  const exposed = corsExposedHeaders.join(", ");
  const allowHeaders = corsAllowedHeaders.join(", ");

  return {
    handle(req, res, requestId) {
      const origin = req.headers.origin;
      const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      if (origin === undefined) return false;
      // the answer depends on Origin: caches must not hand one origin's answer to another
      res.setHeader("vary", "Origin");
      if (!allowed(origin)) {
        if (!preflight) return false; // no CORS headers: the browser withholds the answer from the page
        writeError(res, new AppError("forbidden", "This origin may not call the API (CORS_ORIGINS)."), requestId);
        return true;
      }
      res.setHeader("access-control-allow-origin", any ? "*" : origin);
      if (!preflight) {
        res.setHeader("access-control-expose-headers", exposed);
        return false;
      }
      send(res, 204, {
        "access-control-allow-methods": allowedMethods,
        "access-control-allow-headers": allowHeaders,
        "access-control-max-age": "7200",
        "content-length": "0",
      });
      return true;
    },
  };
}
