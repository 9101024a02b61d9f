import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { runWithRequestId, traceparentOf } from "../lib/log-context.ts";
import type { Logger } from "../lib/logger.ts";
import type { Cors } from "./cors.ts";
import { callInfoKey, requestIdFrom, type CallInfo, type Transport } from "./context.ts";
import { serveDocs } from "./docs.ts";
import { send } from "./http-errors.ts";
import { withParseErrorsAsInvalidArgument } from "./parse-errors.ts";
import { createPanelServer } from "./panel.ts";
import { remoteAddressOf, type NodeHandler } from "./listen.ts";
import type { UnaryFastPath } from "./unary.ts";
import { isPublic, missingCredentials, withAnonymousBodyLimit, withEmptyBody } from "./preflight.ts";

interface RestGateway {
  handle(
    req: Parameters<NodeHandler>[0],
    res: Parameters<NodeHandler>[1],
    info: CallInfo,
    values: ReturnType<typeof createContextValues>,
  ): Promise<void>;
}

export interface DispatchOptions {
  handlers: readonly UniversalHandler[];
  gateway: RestGateway;
  /** GET /readyz: true once the database is reachable and migrated. */
  ready: () => Promise<boolean>;
  logger: Logger;
  /** The client address of a request from its socket peer and X-Forwarded-For (see client-address.ts). */
  clientAddress?: (peer: string, forwardedFor: string | string[] | undefined) => string;
  /** CORS for browsers on other origins (REST, Connect and gRPC-Web alike); answers preflights. */
  cors?: Cors;
  /** GET /metrics on this port (unset: not served here). */
  metrics?: MetricsEndpoint | undefined;
  /** XML endpoints (gateway/xml.ts): answers and returns true for a path of theirs. */
  xml?: (
    req: Parameters<NodeHandler>[0],
    res: Parameters<NodeHandler>[1],
    path: string,
    info: CallInfo,
    values: ReturnType<typeof createContextValues>,
  ) => boolean;
  /** Unary calls it takes (unary.ts) do not go through connect-es's handlers. */
  unary?: UnaryFastPath | undefined;
}

export interface MetricsEndpoint {
  render(): Promise<string>;
  contentType: string;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  token?: string | undefined;
}

/**
 * Every HTTP request enters here: CORS (headers, preflights), health probes, then Connect/gRPC/gRPC-Web by exact RPC path, the API docs
 * (`/docs`, `/openapi.json`), the panel (`/panel`), the XML endpoints (`/api/v1/ota/...`), then the REST
 * gateway. Each call gets its CallInfo (request id, peer, transport) once, shared by all interceptors.
 */
export function createDispatcher(opts: DispatchOptions): NodeHandler {
  const byPath = new Map(opts.handlers.map((h) => [h.requestPath, withParseErrorsAsInvalidArgument(h)]));
  const servePanel = createPanelServer();
  return (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const peer = remoteAddressOf(req);
    const info: CallInfo = {
      requestId: requestIdFrom(req.headers["x-request-id"]),
      remoteAddress: opts.clientAddress?.(peer, req.headers["x-forwarded-for"]) ?? peer,
      transport: transportOf(req.headers["content-type"]),
    };
    res.setHeader("x-request-id", info.requestId);
    const values = createContextValues().set(callInfoKey, info);
    if (opts.cors?.handle(req, res, info.requestId) === true) return;
    // Every log line written while serving the request carries its id and the caller's trace id (see log-context.ts).
    runWithRequestId(info.requestId, () => route(req, res, path, info, values), traceparentOf(req.headers.traceparent));
  };

  function route(
    req: Parameters<NodeHandler>[0],
    res: Parameters<NodeHandler>[1],
    path: string,
    info: CallInfo,
    values: ReturnType<typeof createContextValues>,
  ): void {
    if (path === "/healthz" || path === "/readyz") {
      void probe(path, opts, res);
      return;
    }
    if (path === "/metrics" && opts.metrics !== undefined) {
      void serveMetrics(req, res, opts.metrics);
      return;
    }
    const handler = byPath.get(path);
    if (
      handler === undefined &&
      (serveDocs(req, res, path) || servePanel(req, res, path) || opts.xml?.(req, res, path, info, values) === true)
    )
      return;
    if (handler === undefined) {
      info.transport = "rest";
      opts.gateway.handle(req, res, info, values).catch((err: unknown) => {
        opts.logger.error({ err, requestId: info.requestId }, "gateway failed");
        if (res.headersSent) res.end();
        else send(res, 500, {});
      });
      return;
    }
    const notCompleted = (reason: unknown): void => {
      if (ConnectError.from(reason).code === Code.Aborted) return;
      opts.logger.warn({ err: reason, requestId: info.requestId }, "rpc response not completed");
    };
    const unary = opts.unary?.(req, res, handler.method, values);
    if (unary !== undefined) {
      unary.catch(notCompleted);
      return;
    }
    let uReq = universalRequestFromNodeRequest(req, res, undefined, values);
    // before the caller is authenticated: no body read without credentials, a small one for public RPCs
    if (missingCredentials(handler.method, req.headers.authorization) !== undefined) uReq = withEmptyBody(uReq);
    else if (isPublic(handler.method)) uReq = withAnonymousBodyLimit(uReq);
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch(notCompleted);
  }
}

/** Prometheus text format; with a token, anything else than `Bearer <token>` gets 401. */
export async function serveMetrics(
  req: Parameters<NodeHandler>[0],
  res: Parameters<NodeHandler>[1],
  metrics: MetricsEndpoint,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    send(res, 405, { allow: "GET, HEAD" });
    return;
  }
  if (metrics.token !== undefined && !sameToken(req.headers.authorization, `Bearer ${metrics.token}`)) {
    send(res, 401, { "www-authenticate": "Bearer", "content-type": "text/plain" }, "unauthorized\n");
    return;
  }
  try {
    send(res, 200, { "content-type": metrics.contentType, "cache-control": "no-store" }, await metrics.render());
  } catch {
    send(res, 503, { "content-type": "text/plain" }, "metrics unavailable\n");
  }
}

function sameToken(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? "");
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function transportOf(contentType: string | undefined): Transport {
  if (contentType === undefined) return "connect";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}

async function probe(path: string, opts: DispatchOptions, res: Parameters<NodeHandler>[1]): Promise<void> {
  let ok = true;
  if (path === "/readyz") ok = await opts.ready().catch(() => false);
  const body = JSON.stringify({ status: ok ? "ok" : "unavailable" });
  send(res, ok ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" }, body);
}
