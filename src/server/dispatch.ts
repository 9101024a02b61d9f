import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { Logger } from "../lib/logger.ts";
import type { Cors } from "./cors.ts";
import { callInfoKey, requestIdFrom, type CallInfo, type Transport } from "./context.ts";
import { serveDocs } from "./docs.ts";
import { send } from "./http-errors.ts";
import { withParseErrorsAsInvalidArgument } from "./parse-errors.ts";
import { createPanelServer } from "./panel.ts";
import { remoteAddressOf, type NodeHandler } from "./listen.ts";

export interface RestGateway {
  handle(req: Parameters<NodeHandler>[0], res: Parameters<NodeHandler>[1], info: CallInfo, values: ReturnType<typeof createContextValues>): Promise<void>;
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
}

/**
 * Every HTTP request enters here: CORS (headers, preflights), health probes, then Connect/gRPC/gRPC-Web by exact RPC path, the API docs
 * (`/docs`, `/openapi.json`), the panel (`/panel`), then the REST
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

    if (path === "/healthz" || path === "/readyz") {
      void probe(path, opts, res);
      return;
    }
    const handler = byPath.get(path);
    if (handler === undefined && (serveDocs(req, res, path) || servePanel(req, res, path))) return;
    if (handler === undefined) {
      info.transport = "rest";
      opts.gateway.handle(req, res, info, values).catch((err: unknown) => {
        opts.logger.error({ err, requestId: info.requestId }, "gateway failed");
        if (res.headersSent) res.end();
        else send(res, 500, {});
      });
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, values);
    handler(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        opts.logger.warn({ err: reason, requestId: info.requestId }, "rpc response not completed");
      });
  };
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
