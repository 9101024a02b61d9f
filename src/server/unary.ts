import { create, isMessage, toJsonString, type DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouterOptions,
  type ContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  envelopeCompress,
  envelopeDecompress,
  mergeNonProtocolHeaders,
  validateUniversalHandlerOptions,
  type Compression,
} from "@connectrpc/connect/protocol";
import * as connect from "@connectrpc/connect/protocol-connect";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
import { invokeUnary, unarySpecs, type UnaryCall, type UnarySpec } from "./calls.ts";
import { connectRefusals, readBody, readEnvelope } from "./body.ts";
import { createCallContext } from "./unary-context.ts";
import { CallHeaders } from "./headers.ts";
import { endWith } from "./http-errors.ts";
import type { NodeHandler } from "./listen.ts";
import { encodeGrpcMessage } from "./grpc-message.ts";
import { anonymousBodyLimit, missingCredentials } from "./preflight.ts";
import { joinEnvelopes, nodeHeaders, urlOf, writeHead } from "./unary-wire.ts";

type Req = Parameters<NodeHandler>[0];
type Res = Parameters<NodeHandler>[1];
type Serialization = ReturnType<typeof createMethodSerializationLookup>;
type Spec = UnarySpec & { serialization: Serialization };

/** The three unary protocols, as far as they differ: headers, framing, where the status goes. */
interface Protocol {
  name: "connect" | "grpc" | "grpc-web";
  timeoutHeader: string;
  parseTimeout: typeof grpc.parseTimeout;
  encodingHeader: string;
  acceptEncodingHeader: string;
  /** Connect unary: one bare message; gRPC and gRPC-Web: length-prefixed envelopes. */
  enveloped: boolean;
  contentType: (binary: boolean) => string;
}

const protocols = {
  connect: {
    name: "connect",
    timeoutHeader: connect.headerTimeout,
    parseTimeout: connect.parseTimeout,
    encodingHeader: connect.headerUnaryEncoding,
    acceptEncodingHeader: connect.headerUnaryAcceptEncoding,
    enveloped: false,
    contentType: (binary) => (binary ? connect.contentTypeUnaryProto : connect.contentTypeUnaryJson),
  },
  grpc: {
    name: "grpc",
    timeoutHeader: grpc.headerTimeout,
    parseTimeout: grpc.parseTimeout,
    encodingHeader: grpc.headerEncoding,
    acceptEncodingHeader: grpc.headerAcceptEncoding,
    enveloped: true,
    contentType: (binary) => (binary ? grpc.contentTypeProto : grpc.contentTypeJson),
  },
  "grpc-web": {
    name: "grpc-web",
    timeoutHeader: grpcWeb.headerTimeout,
    parseTimeout: grpcWeb.parseTimeout,
    encodingHeader: grpcWeb.headerEncoding,
    acceptEncodingHeader: grpcWeb.headerAcceptEncoding,
    enveloped: true,
    contentType: (binary) => (binary ? grpcWeb.contentTypeProto : grpcWeb.contentTypeJson),
  },
} satisfies Record<string, Protocol>;

/**
 * The protocol of a POST by its content type; undefined for anything connect-es keeps (streams, gRPC-Web text, gRPC
 * over HTTP/1.1).
 */
function protocolOf(contentType: string, http2: boolean): { protocol: Protocol; binary: boolean } | undefined {
  if (contentType.startsWith("application/grpc-web")) {
    const t = grpcWeb.parseContentType(contentType);
    return t === undefined || t.text ? undefined : { protocol: protocols["grpc-web"], binary: t.binary };
  }
  if (contentType.startsWith("application/grpc")) {
    const t = grpc.parseContentType(contentType);
    return t === undefined || !http2 ? undefined : { protocol: protocols.grpc, binary: t.binary };
  }
  const t = connect.parseContentType(contentType);
  return t === undefined || t.stream ? undefined : { protocol: protocols.connect, binary: t.binary };
}

/** undefined: not taken (connect-es serves it); else the call, settled once the answer is written. */
export type UnaryFastPath = (
  req: Req,
  res: Res,
  method: DescMethod,
  values: ContextValues,
) => Promise<void> | undefined;

/**
 * Serves unary calls of the Connect protocol (POST, JSON and proto), gRPC-Web (binary and JSON) and gRPC over
 * HTTP/2 straight from the Node request: the body is read once, decoded, the recorded implementation is called
 * through the router's interceptors (invokeUnary, as the REST gateway calls it) and the answer or error is written
 * in one piece with connect-es's and protobuf-es's own helpers (error JSON, trailer status, envelopes, compression
 * negotiation, timeouts, canonical JSON), so the wire is the same as connect-es's handlers write. It skips what
 * costs per call there: universal request/response adapters, a chain of async generators, an AbortController
 * aborted (with a DOMException) after every call, a copy of the context per call and a second write for the
 * answer's bytes. Returns undefined for what it leaves to connect-es: GET, streaming methods, gRPC-Web text, gRPC
 * over HTTP/1.1, methods without a recorded implementation.
 */
export function createUnaryFastPath(direct: {
  calls: ReadonlyMap<DescMethod, UnaryCall>;
  options: ConnectRouterOptions;
}): UnaryFastPath {
  const opt = validateUniversalHandlerOptions(direct.options);
  // connect-es would then refuse Connect calls without the header; the fast path does not check it: refuse at start
  if (opt.requireConnectProtocolHeader)
    throw new Error("requireConnectProtocolHeader is not supported by the unary fast path (UNARY_FAST_PATH=off)");
  const specs = new Map<DescMethod, Spec>();
  for (const [method, spec] of unarySpecs(direct.calls, opt.interceptors)) {
    const serialization = createMethodSerializationLookup(method, opt.binaryOptions, opt.jsonOptions, opt);
    specs.set(method, { ...spec, serialization });
  }
  return (req, res, method, values) => {
    const spec = specs.get(method);
    if (spec === undefined || req.method !== "POST") return undefined;
    const found = protocolOf(req.headers["content-type"] ?? "", "stream" in req);
    if (found === undefined) return undefined;
    return serve(found.protocol, found.binary, spec, req, res, values);
  };

  async function serve(p: Protocol, binary: boolean, spec: Spec, req: Req, res: Res, values: ContextValues) {
    const requestHeader = CallHeaders.fromNode(req.headers);
    const timeout = p.parseTimeout(requestHeader.get(p.timeoutHeader), opt.maxTimeoutMs);
    const context = createCallContext({
      method: spec.method,
      protocolName: p.name,
      url: urlOf(req),
      timeoutMs: timeout.timeoutMs,
      shutdownSignal: opt.shutdownSignal,
      requestHeader,
      responseHeader: new CallHeaders({ "content-type": p.contentType(binary) }),
      responseTrailer: new CallHeaders(
        p.name === "connect" ? undefined : { [grpc.headerGrpcStatus]: grpc.grpcStatusOk },
      ),
      values,
    });
    // Only a client that goes away mid-call aborts it (the listener is removed once the call is over; on HTTP/2 a
    // reset stream also reports writableFinished); a deadline aborts through the context's own timer.
    const onClose = (): void => context.abort();
    res.once("close", onClose);
    const compression = compressionNegotiate(
      opt.acceptCompression,
      requestHeader.get(p.encodingHeader),
      requestHeader.get(p.acceptEncodingHeader),
      p.acceptEncodingHeader,
    );
    let output: Uint8Array | string | undefined;
    let error: ConnectError | undefined;
    try {
      if (compression.error) throw compression.error;
      if (timeout.error) throw timeout.error;
      // before the caller is authenticated: an RPC that needs one, called without credentials, gets its 401 from
      // the interceptors with the body unread (an empty message in its place); public RPCs read a small one
      const input =
        missingCredentials(spec.method, req.headers.authorization) !== undefined
          ? create(spec.method.input)
          : await decode(p, binary, spec, req, compression.request, anonymousBodyLimit(spec.method, opt.readMaxBytes));
      const answer = await invokeUnary(spec, context, input);
      const message = isMessage(answer, spec.method.output) ? answer : create(spec.method.output, answer as never);
      // A JSON answer stays a string: a Connect one goes out in one write with the header (bytes would take a
      // second, about 10 us more CPU per call on node:http).
      output = binary ? spec.serialization.getO(true).serialize(message) : jsonText(spec, message);
    } catch (e) {
      error =
        e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      context.abort(error);
    }
    context.done();
    res.off("close", onClose);
    // a client that went away (reset, closed connection) gets no answer
    if ("stream" in res ? res.stream.destroyed : res.destroyed) return;
    try {
      if (p.name === "connect") await answerConnect(res, context, compression.response, output, error);
      else await answerEnveloped(p, res, context, compression.response, output, error);
    } catch (err) {
      // compressing or writing the answer failed: the client gets a reset rather than a hang
      res.destroy();
      throw err;
    }
  }

  /** The request message: body read (capped at readMaxBytes, also once decompressed), parsed. */
  async function decode(
    p: Protocol,
    binary: boolean,
    spec: Spec,
    req: Req,
    compression: Compression | null,
    readMaxBytes: number,
  ): Promise<unknown> {
    let bytes: Uint8Array;
    if (p.enveloped) {
      const env = await readEnvelope(req, readMaxBytes, p.name === "grpc-web" ? grpcWeb.trailerFlag : undefined);
      bytes = (await envelopeDecompress(env, compression, readMaxBytes)).data;
    } else {
      bytes = await readBody(req, readMaxBytes, connectRefusals);
      if (compression) bytes = await compression.decompress(bytes, readMaxBytes);
    }
    try {
      return spec.serialization.getI(binary).parse(bytes);
    } catch (e) {
      // connect-es says `internal` for a protobuf body it cannot parse; it is the caller's error (as in
      // parse-errors.ts for the calls connect-es serves).
      if (e instanceof ConnectError && e.code === Code.Internal && e.rawMessage.startsWith("parse binary:"))
        throw new ConnectError(e.rawMessage, Code.InvalidArgument);
      throw e;
    }
  }

  /** The canonical JSON of an answer, as connect-es's JSON serialization makes it (options, size limit, errors). */
  function jsonText(spec: Spec, message: unknown): string {
    let text: string;
    try {
      text = toJsonString(spec.method.output, message as never, opt.jsonOptions);
    } catch (e) {
      throw ConnectError.from(e, Code.Internal);
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit: only a long answer needs counting here (the answer counts again
    // for its Content-Length)
    const size = text.length * 3 > opt.writeMaxBytes ? Buffer.byteLength(text) : 0;
    if (size > opt.writeMaxBytes)
      throw new ConnectError(
        `message size ${size} is larger than configured writeMaxBytes ${opt.writeMaxBytes}`,
        Code.ResourceExhausted,
      );
    return text;
  }

  async function answerConnect(
    res: Res,
    context: HandlerContext,
    compression: Compression | null,
    output: Uint8Array | string | undefined,
    error: ConnectError | undefined,
  ): Promise<void> {
    let status = 200;
    let body = output!;
    if (error !== undefined) {
      status = connect.codeToHttpStatus(error.code);
      context.responseHeader.set("content-type", connect.contentTypeUnaryJson);
      if (!error.isWireError) mergeNonProtocolHeaders(context.responseHeader, error.metadata);
      body = JSON.stringify(connect.errorToJson(error, opt.jsonOptions));
    }
    let size = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
    if (compression && size >= opt.compressMinBytes) {
      body = await compression.compress(typeof body === "string" ? Buffer.from(body) : body);
      size = body.byteLength;
      context.responseHeader.set(connect.headerUnaryEncoding, compression.name);
    }
    // trailers travel as headers prefixed "trailer-" (connect-es's trailerMux)
    const header = nodeHeaders(context.responseHeader);
    context.responseTrailer.forEach((value, name) => (header[`trailer-${name}`] = value));
    header["content-length"] = String(size);
    writeHead(res, status, header);
    endWith(res, body);
  }

  async function answerEnveloped(
    p: Protocol,
    res: Res,
    context: HandlerContext,
    compression: Compression | null,
    output: Uint8Array | string | undefined,
    error: ConnectError | undefined,
  ): Promise<void> {
    if (compression) context.responseHeader.set(p.encodingHeader, compression.name);
    if (error !== undefined) {
      grpc.setTrailerStatus(context.responseTrailer, error);
      if (error.rawMessage !== "") context.responseTrailer.set("grpc-message", encodeGrpcMessage(error.rawMessage));
    }
    const frames: { flags: number; data: Uint8Array }[] = [];
    if (output !== undefined) {
      const data = typeof output === "string" ? Buffer.from(output) : output;
      frames.push(await envelopeCompress({ flags: 0, data }, compression, opt.compressMinBytes));
    }
    if (p.name === "grpc-web") {
      const trailer = { flags: grpcWeb.trailerFlag, data: grpcWeb.trailerSerialize(context.responseTrailer) };
      frames.push(await envelopeCompress(trailer, compression, opt.compressMinBytes));
    }
    const body = joinEnvelopes(frames);
    const header = nodeHeaders(context.responseHeader);
    // HTTP/1.1 (gRPC-Web): a length instead of chunks; HTTP/2 frames carry their own, as with connect-es.
    if (p.name === "grpc-web") header["content-length"] = String(body.byteLength);
    writeHead(res, 200, header);
    if (p.name === "grpc") res.addTrailers(nodeHeaders(context.responseTrailer));
    endWith(res, body);
  }
}
