import { create, type DescMethod, type DescMethodUnary, type Message } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { AppError, toAppError } from "../errors.ts";
import { invokeUnary, unarySpecs, type UnaryCall } from "../server/calls.ts";
import { requestEncoding } from "../server/compression.ts";
import type { CallInfo } from "../server/context.ts";
import { CallHeaders } from "../server/headers.ts";
import { send, type NodeResponse } from "../server/http-errors.ts";
import { readBody, restRefusals, type NodeRequest } from "../server/body.ts";

/** One XML document read into the call of an RPC, and how its outcome is written back as XML. */
interface XmlCall {
  /** The RPC whose rules the call runs under: authentication and scopes, partner switch, limits, idempotency. */
  method: DescMethodUnary;
  /** The RPC's request (its init shape). */
  request: object;
  /** The idempotency key when the caller sent no Idempotency-Key header (e.g. from the document's EchoToken). */
  idempotencyKey?: string | undefined;
  /** The XML answer for the RPC's answer; `values` holds what the interceptors learnt (the caller). */
  answer(result: unknown, values: ContextValues): Promise<string>;
  /** The XML answer for an error of the call. */
  error(err: AppError): string;
}

/**
 * An XML endpoint: a path outside the google.api.http routes whose document is translated into an existing RPC's
 * request, so every rule of that RPC holds as it does on REST, Connect and gRPC (one interceptor chain).
 */
export interface XmlEndpoint {
  /** The call for a document posted to `path`, or undefined when the path is not this endpoint's. */
  route(path: string): ((xml: string) => XmlCall) | undefined;
  /** The XML answer for an error before a call exists (bad document, method, media type or size). */
  error(err: AppError, path: string): string;
  /** Largest document accepted (bytes as sent and decompressed). */
  maxBodyBytes: number;
}

const XML_TYPES = new Set(["application/xml", "text/xml"]);
const FORWARDED = ["authorization", "idempotency-key", "user-agent", "x-forwarded-for", "traceparent", "tracestate"];
const PROTOCOL_HEADER = /^(content-type|content-length|content-encoding|accept-encoding|connect-|grpc-|trailer-)/;
const noTimeout = (): undefined => undefined;

/** Serves the endpoints; the handler returns false for a path that is none of theirs. */
export function createXmlEndpoints(opts: {
  calls: ReadonlyMap<DescMethod, UnaryCall>;
  interceptors: readonly Interceptor[];
  endpoints: readonly XmlEndpoint[];
}): (req: NodeRequest, res: NodeResponse, path: string, info: CallInfo, values: ContextValues) => boolean {
  const specs = unarySpecs(opts.calls, opts.interceptors);
  return (req, res, path, info, values) => {
    for (const endpoint of opts.endpoints) {
      const route = endpoint.route(path);
      if (route === undefined) continue;
      void serve(endpoint, route, req, res, path, info, values).catch((err: unknown) => {
        const e = toAppError(err);
        info.error = e;
        if (res.headersSent) res.end();
        else reply(res, e.httpStatus, info.requestId, endpoint.error(e, path), e);
      });
      return true;
    }
    return false;
  };

  async function serve(
    endpoint: XmlEndpoint,
    route: (xml: string) => XmlCall,
    req: NodeRequest,
    res: NodeResponse,
    path: string,
    info: CallInfo,
    values: ContextValues,
  ): Promise<void> {
    info.transport = "rest";
    if (req.method !== "POST")
      throw new AppError("method_not_allowed", `${req.method} is not allowed on ${path}; use POST.`, {
        headers: { allow: "POST" },
      });
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (!XML_TYPES.has(type)) throw new AppError("unsupported_media_type", "Content-Type must be application/xml.");
    const body = await readBody(
      req,
      endpoint.maxBodyBytes,
      restRefusals,
      requestEncoding(req.headers["content-encoding"]),
    );
    const call = route(body.toString("utf8"));
    const spec = specs.get(call.method);
    if (spec === undefined) throw new AppError("internal", `${call.method.name} is not served`);
    const header: Record<string, string> = { "x-request-id": info.requestId };
    for (const name of FORWARDED) {
      const v = req.headers[name];
      if (typeof v === "string") header[name] = v;
    }
    if (header["idempotency-key"] === undefined && call.idempotencyKey !== undefined)
      header["idempotency-key"] = call.idempotencyKey;
    const controller = new AbortController();
    const context: HandlerContext = {
      service: spec.method.parent,
      method: spec.method,
      protocolName: "rest",
      requestMethod: "POST",
      url: `http://gateway/${spec.method.parent.typeName}/${spec.method.name}`,
      timeoutMs: noTimeout,
      signal: controller.signal,
      requestHeader: new CallHeaders(header),
      responseHeader: new CallHeaders(),
      responseTrailer: new CallHeaders(),
      values,
    };
    const onClose = (): void => controller.abort();
    res.once("close", onClose);
    const headers: Record<string, string> = {};
    try {
      const result = await invokeUnary(spec, context, create(spec.method.input, call.request as never) as Message);
      context.responseHeader.forEach((value, name) => {
        if (!PROTOCOL_HEADER.test(name)) headers[name] = value;
      });
      const xml = await call.answer(result, values);
      reply(res, 200, info.requestId, xml, undefined, headers);
    } catch (err) {
      const e = info.error ?? toAppError(err);
      info.error = e;
      const h = new CallHeaders(context.responseHeader);
      if (err instanceof ConnectError) err.metadata.forEach((value, name) => h.set(name, value));
      h.forEach((value, name) => {
        if (!PROTOCOL_HEADER.test(name) && !name.startsWith("x-error-")) headers[name] = value;
      });
      reply(res, e.httpStatus, info.requestId, call.error(e), e, headers);
    } finally {
      res.off("close", onClose);
    }
  }
}

function reply(
  res: NodeResponse,
  status: number,
  requestId: string,
  xml: string,
  err?: AppError,
  extra: Record<string, string> = {},
): void {
  const headers: Record<string, string | number> = {
    ...extra,
    "content-type": "application/xml; charset=utf-8",
    "content-length": Buffer.byteLength(xml),
    "cache-control": "no-store",
    "x-request-id": requestId,
  };
  if (err !== undefined) {
    for (const [name, value] of Object.entries(err.headers)) if (!name.startsWith("x-oauth-")) headers[name] = value;
    if (err.retryAfterSeconds !== undefined) headers["retry-after"] = Math.max(1, Math.ceil(err.retryAfterSeconds));
    if (err.code === "unauthorized") headers["www-authenticate"] ??= "Bearer";
  }
  send(res, status, headers, xml);
}
