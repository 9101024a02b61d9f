import { readFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2, { type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { ConnectionLimits } from "../config.ts";
import { AppError } from "../errors.ts";
import { requestIdFrom } from "./context.ts";
import { errorBody, writeError } from "./http-errors.ts";
import { admission, guardStreams, stallGuard } from "./connection-guards.ts";

export type NodeHandler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

export interface Listener {
  port: number;
  /** Stop accepting, let in-flight requests finish (up to graceMs), then close every connection. */
  close(graceMs: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** The defaults of the configuration (docs/operations/configuration.md). */
const defaultConnectionLimits: ConnectionLimits = {
  maxPerAddress: 256,
  sniffTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 65_000,
  maxStreamsPerSession: 100,
  writeStallTimeoutMs: 30_000,
};

/**
 * One port for gRPC (h2c prior knowledge), Connect, gRPC-Web and REST over HTTP/1.1 and HTTP/2.
 * Cleartext http2 with allowHTTP1 does not serve HTTP/1.1, so each connection's first bytes are sniffed:
 * the HTTP/2 preface goes to an http2 server, anything else to an http/1.1 server. With TLS, ALPN decides.
 */
export async function listen(
  handler: NodeHandler,
  opts: {
    port: number;
    host: string;
    tls?: { certFile: string; keyFile: string } | undefined;
    limits?: Partial<ConnectionLimits>;
  },
): Promise<Listener> {
  const limits: ConnectionLimits = { ...defaultConnectionLimits, ...opts.limits };
  const admit = admission(limits.maxPerAddress);
  const sockets = new Set<net.Socket>();
  const stalls = stallGuard(limits.writeStallTimeoutMs);
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const counted: NodeHandler = (req, res) => {
    inFlight++;
    res.once("close", () => {
      inFlight--;
      if (inFlight === 0) drained?.();
    });
    // An answer sent before the body arrived (401, 413, 429): on HTTP/2 reset the stream once the answer is out, so
    // the client stops sending and the stream does not count against the session's limit (RFC 9113 8.1). Node's
    // compatibility layer ends every response with trailers, sent by its own "wantTrailers" listener registered before
    // this one; the response's "finish" comes only with the stream's close, too late.
    if ("stream" in req) {
      const stream = req.stream;
      const reset = (): void =>
        void (stream.readableEnded || stream.closed || stream.close(http2.constants.NGHTTP2_NO_ERROR));
      stream.once("wantTrailers", () => setImmediate(reset));
    }
    const badHost = hostProblem(req);
    if (badHost !== undefined) {
      // the rest of this connection cannot be trusted to be framed as the client meant: close it
      if (!("stream" in req)) res.setHeader("connection", "close");
      writeError(res, badHost, requestIdFrom(undefined));
      return;
    }
    handler(req, res);
  };

  let outer: net.Server;
  const servers: { close(): unknown }[] = [];
  if (opts.tls) {
    const secure = http2.createSecureServer(
      {
        allowHTTP1: true,
        cert: readFileSync(opts.tls.certFile),
        key: readFileSync(opts.tls.keyFile),
        ...http1Options(limits),
        settings: { maxConcurrentStreams: limits.maxStreamsPerSession },
      },
      counted,
    );
    secure.on("connection", (socket: net.Socket) => admit(socket));
    secure.on("clientError", rejectMalformed);
    secure.on("secureConnection", track);
    guardStreams(secure, limits, stalls);
    // HTTP/1.1 over TLS: the TLS socket carries the answers (HTTP/2 streams are watched one by one)
    secure.on("secureConnection", (socket: net.Socket) => {
      if ((socket as { alpnProtocol?: string | false }).alpnProtocol !== "h2")
        stalls.watch(socket, () => socket.destroy());
    });
    outer = secure;
  } else {
    const h1 = http.createServer(http1Options(limits), counted);
    h1.on("clientError", rejectMalformed);
    // Sockets reach h1 through emit("connection"), never its own listen(): "listening" starts the check that
    // enforces headersTimeout and requestTimeout (408 and close), which Node arms only on that event.
    h1.emit("listening");
    const h2 = http2.createServer({ settings: { maxConcurrentStreams: limits.maxStreamsPerSession } }, counted);
    guardStreams(h2, limits, stalls);
    servers.push(h1, h2);
    outer = net.createServer({ noDelay: true }, (socket) => {
      if (!admit(socket)) return;
      track(socket);
      sniff(socket, limits.sniffTimeoutMs, (isH2, head) => {
        // The sniffed bytes go back into the socket's buffer: the http1 parser reads them from there, and an
        // http2 session feeds what is buffered to nghttp2 before it reads the socket's handle directly.
        socket.unshift(head);
        if (isH2) h2.emit("connection", socket);
        else {
          stalls.watch(socket, () => socket.destroy());
          h1.emit("connection", socket);
          socket.resume();
        }
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    outer.once("error", reject);
    outer.listen(opts.port, opts.host, () => resolve());
  });
  const address = outer.address();
  const port = typeof address === "object" && address !== null ? address.port : opts.port;

  return {
    port,
    async close(graceMs) {
      stalls.stop();
      outer.close();
      for (const s of servers) s.close();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      for (const s of sockets) s.destroy();
    },
  };
}

/** The peer address of a request (on HTTP/2, the session's socket). */
export function remoteAddressOf(req: IncomingMessage | Http2ServerRequest): string {
  return (req.socket as net.Socket | undefined)?.remoteAddress ?? "";
}

/**
 * Node answers an HTTP/1.1 request it cannot parse (bad syntax, headers too large, headers timeout) by itself,
 * with no body; this gives it our error body like every other 4xx, then closes the connection.
 */
function rejectMalformed(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const error: AppError =
    err.code === "HPE_HEADER_OVERFLOW"
      ? new AppError("headers_too_large", "Request headers are too large.")
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new AppError("request_timeout", "The request was not received in time.")
        : new AppError("invalid_argument", "Malformed HTTP request.");
  const body = JSON.stringify(errorBody(error, requestIdFrom(undefined)));
  const status = error.httpStatus;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with more than one Host field, is answered 400
 * (a proxy and this server could each pick a different one). Node's own check (requireHostHeader) answers the
 * first with an empty body, and keeps the first of two; this one answers both with our error body.
 */
function hostProblem(req: IncomingMessage | Http2ServerRequest): AppError | undefined {
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === "host") hosts++;
  if (hosts > 1) return new AppError("invalid_argument", "The request has more than one Host header.");
  if (hosts === 0 && req.httpVersion === "1.1")
    return new AppError("invalid_argument", "An HTTP/1.1 request needs a Host header.");
  return undefined;
}

function http1Options(limits: ConnectionLimits): http.ServerOptions {
  const requestTimeout = limits.requestTimeoutMs;
  const headersTimeout = Math.min(limits.headersTimeoutMs, requestTimeout);
  return {
    // hostProblem() answers a missing Host with our error body
    requireHostHeader: false,
    keepAliveTimeout: limits.idleTimeoutMs,
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.min(1_000, Math.max(100, headersTimeout / 4)),
  };
}

/**
 * Reads until the bytes seen either are or cannot be the HTTP/2 connection preface; a connection that shows
 * neither within timeoutMs (silent, one byte, half a preface) is closed.
 */
function sniff(socket: net.Socket, timeoutMs: number, decide: (isH2: boolean, head: Buffer) => void): void {
  let head: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  timer.unref();
  const onData = (chunk: Buffer): void => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const n = Math.min(head.length, PREFACE.length);
    const prefixMatches = head.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (prefixMatches && head.length < PREFACE.length) return;
    clearTimeout(timer);
    socket.off("data", onData);
    socket.pause();
    decide(prefixMatches, head);
  };
  socket.on("data", onData);
  socket.once("error", () => socket.destroy());
}
