import { createSecureContext, rootCertificates } from "node:tls";
import { Pool } from "undici";
import type { VerifiedTarget } from "./address.ts";

/** Largest part of a response that is consumed; the rest is never read (the connection is dropped). */
export const maxResponseBytes = 64 * 1024;

interface SendRequest {
  target: VerifiedTarget;
  headers: Record<string, string>;
  body: Buffer;
  /** Total budget for connect, TLS, request, headers and the consumed body. */
  timeoutMs: number;
}

/** Failure classes shown in the delivery history (never a body or a key). */
type ErrorClass =
  | "timeout"
  | "connection"
  | "tls"
  | "redirect"
  | "http_status"
  | "address_rejected"
  | "payload_too_large"
  | "interrupted"
  | "internal"
  | "endpoint_closed"
  | "partner_api_disabled";

export interface SendResult {
  httpStatus: number | null;
  durationMs: number;
  errorClass: ErrorClass | null;
  errorMessage: string | null;
  /** A 429 or 503 answer's Retry-After, in ms from the answer (absent when none or unreadable). */
  retryAfterMs?: number;
}

export interface Sender {
  send(req: SendRequest): Promise<SendResult>;
  close(): Promise<void>;
}

/**
 * HTTPS sender that connects to the IP address that passed the address rules (DNS cannot change between
 * check and connect: the socket's lookup answers with that IP only), verifies TLS against the host name
 * (SNI servername), follows no redirects and consumes at most 64 KiB of the answer.
 */
export function createSender(
  options: { extraCa?: string | undefined; maxPools?: number; connectionsPerPool?: number } = {},
): Sender {
  // One context for every connection: passing `ca` instead would parse every root certificate per handshake.
  const secureContext =
    options.extraCa === undefined ? undefined : createSecureContext({ ca: [...rootCertificates, options.extraCa] });
  const pools = new Map<string, Pool>();
  const maxPools = options.maxPools ?? 256;

  function poolFor(t: VerifiedTarget, timeoutMs: number): Pool {
    const key = `${t.host}|${t.port}|${t.ip}`;
    let pool = pools.get(key);
    if (pool !== undefined) {
      // Map order is insertion order: re-inserting keeps the most recently used pools at the end.
      pools.delete(key);
      pools.set(key, pool);
      return pool;
    }
    const pinned = t.ip;
    const family = t.family;
    pool = new Pool(`https://${t.literalIp !== undefined && family === 6 ? `[${t.host}]` : t.host}:${t.port}`, {
      connections: options.connectionsPerPool ?? 64,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: {
        ...(t.literalIp === undefined ? { servername: t.host } : {}),
        ...(secureContext !== undefined ? { secureContext } : {}),
        allowH2: false,
        rejectUnauthorized: true,
        timeout: timeoutMs,
        lookup: (_hostname: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (opts.all) cb(null, [{ address: pinned, family }]);
          else cb(null, pinned, family);
        },
      } as NonNullable<Pool.Options["connect"]>,
    });
    pools.set(key, pool);
    if (pools.size > maxPools) {
      const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
      pools.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
    return pool;
  }

  return {
    async send(req) {
      const started = performance.now();
      const ms = () => Math.max(0, Math.round(performance.now() - started));
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new TimeoutError()), req.timeoutMs);
      try {
        const pool = poolFor(req.target, req.timeoutMs);
        const res = await pool.request({
          method: "POST",
          path: `${req.target.url.pathname}${req.target.url.search}`,
          headers: { ...req.headers, "content-length": String(req.body.length) },
          body: req.body,
          signal: abort.signal,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        });
        await consumeAtMost(res.body, maxResponseBytes);
        const status = res.statusCode;
        if (status >= 200 && status < 300)
          return { httpStatus: status, durationMs: ms(), errorClass: null, errorMessage: null };
        if (status >= 300 && status < 400)
          return {
            httpStatus: status,
            durationMs: ms(),
            errorClass: "redirect",
            errorMessage: `redirect (${status}) not followed`,
          };
        const retryAfterMs =
          status === 429 || status === 503 ? parseRetryAfter(res.headers["retry-after"], Date.now()) : undefined;
        return {
          httpStatus: status,
          durationMs: ms(),
          errorClass: "http_status",
          errorMessage: `non-2xx response (${status})`,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      } catch (err) {
        const { errorClass, errorMessage } = classify(err, abort.signal);
        return { httpStatus: null, durationMs: ms(), errorClass, errorMessage };
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.destroy().catch(() => undefined)));
    },
  };
}

/** `Retry-After: <seconds>` or `<HTTP-date>` as ms from `nowMs`; undefined when absent or unreadable. */
function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === "") return undefined;
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

class TimeoutError extends Error {
  override name = "TimeoutError";
}

async function consumeAtMost(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  limit: number,
): Promise<void> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > limit) {
      // Destroying the body closes the socket: the rest of the answer is never read.
      body.destroy();
      return;
    }
  }
}

const tlsCodes = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;

function classify(err: unknown, signal: AbortSignal): { errorClass: ErrorClass; errorMessage: string } {
  if (signal.aborted) return { errorClass: "timeout", errorMessage: "no complete answer within the time limit" };
  const code = findCode(err);
  if (
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "ETIMEDOUT"
  ) {
    return { errorClass: "timeout", errorMessage: "no complete answer within the time limit" };
  }
  if (code !== undefined && tlsCodes.test(code))
    return { errorClass: "tls", errorMessage: `TLS verification failed (${code})` };
  if (err instanceof Error && /certificate|TLS|SSL/i.test(err.message))
    return { errorClass: "tls", errorMessage: `TLS failed: ${err.message.slice(0, 200)}` };
  const detail = err instanceof Error && err.message !== "" ? `: ${err.message.slice(0, 200)}` : "";
  return {
    errorClass: "connection",
    errorMessage: `connection failed${code !== undefined ? ` (${code})` : ""}${detail}`,
  };
}

function findCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const inner = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(inner) && inner.length > 0) return findCode(inner[0]);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
