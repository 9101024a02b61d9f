import { type DescMethod, type Message } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { AppError, toAppError, type FieldViolation } from "../errors.ts";
import { invokeUnary, unarySpecs, type UnaryCall, type UnarySpec } from "../server/calls.ts";
import type { CallInfo } from "../server/context.ts";
import { CallHeaders } from "../server/headers.ts";
import { send, writeError, type NodeResponse } from "../server/http-errors.ts";
import type { NodeRequest } from "../server/body.ts";
import { parse } from "./codec.ts";
import { jsonPieces } from "./codec-text.ts";
import { fieldAt } from "./params.ts";
import { requestJson } from "./request-json.ts";
import { anonymousBodyLimit, missingCredentials } from "../server/preflight.ts";
import { sendJson, sendMemoized } from "./respond.ts";
import { memoOf } from "../lib/answer-cache.ts";
import { routeMatcher, routesOf, type Route } from "./routes.ts";

export type { Route } from "./routes.ts";
export { routesOf } from "./routes.ts";

export interface GatewayOptions {
  /** The RPC implementations by method (see recordCalls) and the router's interceptors, in router order. */
  calls: ReadonlyMap<DescMethod, UnaryCall>;
  interceptors: readonly Interceptor[];
  maxBodyBytes: number;
  /** Per file on multipart routes (default 6 MiB, the identity photo limit). */
  maxFileBytes?: number;
  maxFiles?: number;
  /** Answer 401 before reading the body when an RPC that needs a caller gets no Authorization (preflight.ts). */
  refuseAnonymousBeforeBody?: boolean;
}

export interface Gateway {
  routes: readonly Route[];
  handle(req: NodeRequest, res: NodeResponse, info: CallInfo, values: ContextValues): Promise<void>;
}

/** Incoming headers an RPC may read; everything else stays at the HTTP edge. */
const FORWARDED = [
  "authorization",
  "idempotency-key",
  "user-agent",
  "x-forwarded-for",
  "accept-language",
  "traceparent",
  "tracestate",
];
/** Connect/gRPC protocol headers that must not leak into REST responses. */
const PROTOCOL_HEADER = /^(content-type|content-length|content-encoding|accept-encoding|connect-|grpc-|trailer-)/;

/**
 * The REST face: google.api.http bindings read from the descriptors, each served by calling the RPC's
 * implementation in memory through the same interceptor chain as gRPC and Connect (authentication, limits and
 * error mapping exist once), rendered by the one JSON codec.
 */
export function createGateway(opts: GatewayOptions): Gateway {
  const routes = routesOf([...opts.calls.keys()].map((method) => ({ method })));
  const matchRoute = routeMatcher(routes);
  const specs = unarySpecs(opts.calls, opts.interceptors);
  const limits = {
    maxFileBytes: opts.maxFileBytes ?? 6 * 1024 * 1024,
    maxFiles: opts.maxFiles ?? 4,
    maxFieldBytes: 64 * 1024,
  };

  return {
    routes,
    async handle(req, res, info, values) {
      const url = parseTarget(req.url ?? "/");
      const match = matchRoute(req.method ?? "GET", url.pathname);
      if (match === undefined) {
        writeError(res, new AppError("not_found", `No endpoint ${req.method} ${url.pathname}.`), info.requestId);
        return;
      }
      if ("allow" in match) {
        const err = new AppError(
          "method_not_allowed",
          `${req.method} is not allowed on ${url.pathname}; use ${match.allow.join(", ")}.`,
          { headers: { allow: match.allow.join(", ") } },
        );
        writeError(res, err, info.requestId);
        return;
      }
      const { route, vars } = match;
      const style = route.rest.errorStyle === "oauth2" ? "oauth2" : "";
      const anonymous =
        opts.refuseAnonymousBeforeBody === true
          ? missingCredentials(route.method, req.headers.authorization)
          : undefined;
      if (anonymous !== undefined) {
        info.error = anonymous;
        writeError(res, anonymous, info.requestId, style);
        return;
      }
      let input: Message;
      try {
        if (style === "oauth2") refuseOAuthQuery(route, url.searchParams);
        const violations: FieldViolation[] = [];
        const maxBodyBytes = anonymousBodyLimit(route.method, opts.maxBodyBytes);
        const json = await requestJson(route, vars, url.searchParams, req, maxBodyBytes, limits, violations);
        const message = parse(route.method.input, json, violations);
        input = message;
      } catch (err) {
        if (err instanceof AppError) info.error = err;
        writeError(
          res,
          err instanceof AppError ? err : new AppError("invalid_argument", "Invalid request."),
          info.requestId,
          style,
        );
        return;
      }
      await invoke(route, input, req, res, info, values, style, specs.get(route.method)!);
    },
  };
}

/**
 * RFC 6749 2.3.1 and 3.2: the token endpoint's parameters travel in the body, never the URL (proxies and access
 * logs keep query strings). A parameter of the request in the query is refused as invalid_request before the body
 * is read.
 */
function refuseOAuthQuery(route: Route, query: URLSearchParams): void {
  if (query.size === 0) return;
  const named = [...new Set(query.keys())].filter((key) => fieldAt(route.method.input, key) !== undefined);
  if (named.length > 0) {
    throw new AppError(
      "invalid_argument",
      `Send ${named.join(", ")} in the form body (or client credentials with HTTP Basic), never in the URL query.`,
      { headers: { "x-oauth-error": "invalid_request" } },
    );
  }
}

/** The query of a target without one; only read (requestJson). */
const NO_QUERY = new URLSearchParams();

/** Plain paths (letters, digits, "/", "-", "_", "~", ":") need none of WHATWG URL's normalisation. */
const PLAIN_PATH = /^\/[A-Za-z0-9/_~:-]*$/;

/**
 * The request target's path and query as `new URL(target, base)` gives them, without parsing a plain one (a
 * tenth of the gateway's own time on a small call): anything with dots, percent signs, backslashes or a
 * fragment goes through the URL parser.
 */
function parseTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  const q = target.indexOf("?");
  const pathname = q === -1 ? target : target.slice(0, q);
  if (PLAIN_PATH.test(pathname) && !target.includes("#", q)) {
    return { pathname, searchParams: q === -1 ? NO_QUERY : new URLSearchParams(target.slice(q + 1)) };
  }
  return new URL(target, "http://gateway");
}

const noTimeout = (): undefined => undefined;

async function invoke(
  route: Route,
  input: Message,
  req: NodeRequest,
  res: NodeResponse,
  info: CallInfo,
  values: ContextValues,
  style: "" | "oauth2",
  spec: UnarySpec,
): Promise<void> {
  const header: Record<string, string> = { "x-request-id": info.requestId };
  for (const name of FORWARDED) {
    const v = req.headers[name];
    if (typeof v === "string") header[name] = v;
  }
  const method = spec.method;
  // The context connect-es' createHandlerContext makes, without its deadline timer and linked signals (a REST
  // call has no timeout header): one AbortController, aborted only by a client that goes away mid-call (abort()
  // with no reason builds a costly DOMException, so never on the way out).
  const controller = new AbortController();
  const context: HandlerContext = {
    service: method.parent,
    method,
    protocolName: "rest",
    requestMethod: "POST",
    url: `http://gateway/${method.parent.typeName}/${method.name}`,
    timeoutMs: noTimeout,
    signal: controller.signal,
    requestHeader: new CallHeaders(header),
    responseHeader: new CallHeaders(),
    responseTrailer: new CallHeaders(),
    values,
  };
  // Only while the call runs: on HTTP/2 a reset stream also reports writableFinished, so that cannot tell.
  const onClose = (): void => controller.abort();
  res.once("close", onClose);
  // The implementation's answer as it is: the codec renders a message or its init shape alike, so a large answer
  // is not copied into a message first (create() was a fifth of a 366-day availability request).
  let answer: Message;
  try {
    answer = (await invokeUnary(spec, context, input)) as Message;
  } catch (err) {
    res.off("close", onClose);
    const headers = new CallHeaders(context.responseHeader);
    if (err instanceof ConnectError) err.metadata.forEach((value, name) => headers.set(name, value));
    headers.forEach((value, name) => {
      if (!PROTOCOL_HEADER.test(name) && !name.startsWith("x-error-") && !res.headersSent) res.setHeader(name, value);
    });
    writeError(res, info.error ?? toAppError(err), info.requestId, style);
    return;
  }
  res.off("close", onClose);
  const headers: Record<string, string> = {};
  context.responseHeader.forEach((value, name) => {
    if (!PROTOCOL_HEADER.test(name)) headers[name] = value;
  });
  const status = route.rest.successStatus || 200;
  headers["cache-control"] ??= "no-store";
  headers["x-request-id"] = info.requestId;
  if (status === 204) {
    send(res, 204, headers);
    return;
  }
  const memo = memoOf(answer);
  if (memo !== undefined && route.responseBody === "") {
    // a cached answer: its JSON and compressed forms are rendered once and kept with it
    await sendMemoized(req, res, status, headers, memo, () =>
      Buffer.from([...jsonPieces(route.method.output, answer)].join("")),
    );
    return;
  }
  const field =
    route.responseBody === ""
      ? undefined
      : (fieldAt(route.method.output, route.responseBody)?.jsonName ?? route.responseBody);
  await sendJson(req, res, status, headers, jsonPieces(route.method.output, answer, field));
}
