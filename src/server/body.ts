import type { IncomingMessage } from "node:http";
import { constants as http2Constants, type Http2ServerRequest } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { AppError } from "../errors.ts";
import { decodeBody, type Encoding } from "./compression.ts";

export type NodeRequest = IncomingMessage | Http2ServerRequest;

/**
 * The one request-body reader of the service: REST (gateway), the unary fast path (Connect bodies and the one
 * enveloped message of a gRPC or gRPC-Web call) and multipart uploads all read through `consume` below, with one
 * rule for refusing a body. Only the words of a refusal depend on the face: REST answers with our error body,
 * the fast path with connect-es's codes and messages (it is compared with connect-es in unary-fast-path.test.ts).
 */
export interface Refusals {
  /** The body (or one envelope) is larger than `limit`; `size` when it was declared before it was read. */
  tooLarge(limit: number, size?: number): Error;
  /** The body did not match its Content-Length. */
  mismatch(promised: number, received: number): Error;
  /** The client went away mid-body (reset, closed connection): nobody reads the answer, the handler must not wait. */
  gone(cause?: Error): Error;
}

export const restRefusals: Refusals = {
  tooLarge: (limit) => new AppError("payload_too_large", `The request body is larger than ${limit} bytes.`),
  mismatch: (promised, received) =>
    new AppError("invalid_argument", `The request body promised ${promised} bytes and sent ${received}.`),
  gone: () => new AppError("invalid_argument", "The client closed the request before its body was complete."),
};

/** connect-es's words (readAllBytes and its envelope decoder). */
export const connectRefusals: Refusals = {
  tooLarge: (limit, size) =>
    new ConnectError(
      size === undefined
        ? `message size is larger than configured readMaxBytes ${limit}`
        : `message size ${size} is larger than configured readMaxBytes ${limit}`,
      Code.ResourceExhausted,
    ),
  mismatch: (promised, received) =>
    new ConnectError(`protocol error: promised ${promised} bytes, received ${received}`, Code.InvalidArgument),
  gone: (cause) =>
    cause === undefined
      ? new ConnectError("the client closed the request", Code.Aborted)
      : new ConnectError(cause.message, Code.Aborted, undefined, undefined, cause),
};

/*
 * Refusing a body, measured over real sockets:
 * - destroying the request at once resets the connection: the client sees ECONNRESET, not our 413 (every
 *   oversized chunked upload did);
 * - `Connection: close` makes Node close right after the answer, and a client still writing the last bytes of
 *   a small form gets EPIPE instead of the answer;
 * - pausing alone leaves an HTTP/2 stream open for good, its client stuck on flow control.
 * So the rest of the body is read and thrown away (never buffered) up to DRAIN_BYTES, which lets a small
 * refused request end cleanly on a reusable connection; a client that keeps sending past that is cut off
 * (HTTP/1.1: the socket; HTTP/2: RST_STREAM NO_ERROR, RFC 9113 8.1) once our answer has been written.
 */
const DRAIN_BYTES = 1024 * 1024;

/** Drops the rest of a refused body (see above) and returns the refusal. */
export function refuse(req: NodeRequest, error: Error): Error {
  let discarded = 0;
  const discard = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded <= DRAIN_BYTES) return;
    req.off("data", discard);
    req.pause();
    setImmediate(() => cutOff(req)); // the answer is written in the microtasks right after the refusal
  };
  req.on("data", discard);
  req.resume();
  return error;
}

function cutOff(req: NodeRequest): void {
  if ("stream" in req) {
    if (!req.stream.closed) req.stream.close(http2Constants.NGHTTP2_NO_ERROR);
  } else req.socket.destroy();
}

/**
 * Reads the whole body, refusing as soon as it passes `limit` (or its Content-Length) instead of buffering the
 * rest. With a Content-Encoding the limit holds for the body as sent and again once decompressed: decompression
 * stops at `limit` bytes of output (a zip bomb is refused without being inflated), corrupt data is a 400.
 */
export async function readBody(
  req: NodeRequest,
  limit: number,
  refusals: Refusals,
  coding?: Encoding,
): Promise<Buffer> {
  const raw = await readRaw(req, limit, refusals);
  return coding === undefined ? raw : decodeBody(coding, raw, limit);
}

function readRaw(req: NodeRequest, limit: number, refusals: Refusals): Promise<Buffer> {
  const hint = lengthHint(req.headers["content-length"]);
  if (hint !== undefined && hint > limit) return Promise.reject(refuse(req, refusals.tooLarge(limit, hint)));
  const chunks: Buffer[] = [];
  let received = 0;
  return consume(req, refusals, (chunk) => {
    received += chunk.byteLength;
    if (hint !== undefined && received > hint) throw refusals.mismatch(hint, received);
    if (received > limit) throw refusals.tooLarge(limit);
    chunks.push(chunk);
  }).then(() => {
    if (hint !== undefined && received < hint) throw refusals.mismatch(hint, received);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
  });
}

export interface Envelope {
  flags: number;
  data: Uint8Array;
}

/** The one enveloped message of a unary gRPC or gRPC-Web call (each envelope at most `limit`; trailer frames skipped). */
export function readEnvelope(req: NodeRequest, limit: number, trailerFlag: number | undefined): Promise<Envelope> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let need = 5;
  let inBody = false;
  let flags = 0;
  let first: Envelope | undefined;
  /** The first n pending bytes; what follows stays pending. */
  const take = (n: number): Buffer => {
    const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = all.byteLength > n ? [all.subarray(n)] : [];
    pendingBytes -= n;
    return all.subarray(0, n);
  };
  const isTrailer = (f: number): boolean => trailerFlag !== undefined && (f & trailerFlag) === trailerFlag;
  return consume(req, connectRefusals, (chunk) => {
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    while (pendingBytes >= need) {
      const bytes = take(need);
      if (!inBody) {
        flags = bytes[0]!;
        const length = bytes.readUInt32BE(1);
        if (length > limit) throw connectRefusals.tooLarge(limit, length);
        if (first !== undefined && !isTrailer(flags))
          throw new ConnectError("protocol error: received extra input message for unary method", Code.Unimplemented);
        inBody = true;
        need = length;
      } else {
        if (first === undefined && !isTrailer(flags)) first = { flags, data: bytes };
        inBody = false;
        need = 5;
      }
    }
  }).then(() => {
    if (pendingBytes > 0 || (inBody && need > 0))
      throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    if (first === undefined)
      throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
    return first;
  });
}

/**
 * Feeds every chunk of the body to onChunk until the end. An error thrown by onChunk is the refusal: reading
 * stops and the rest of the body is dropped (`refuse`).
 */
function consume(req: NodeRequest, refusals: Refusals, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      try {
        onChunk(chunk);
      } catch (err) {
        stop();
        reject(refuse(req, err as Error));
      }
    };
    const onEnd = (): void => {
      stop();
      resolve();
    };
    const onError = (err: Error): void => {
      stop();
      reject(refusals.gone(err));
    };
    // HTTP/2: a stream reset by the client closes the request without an error
    const onClose = (): void => {
      if (req.complete) return; // 'end' settles it
      stop();
      reject(refusals.gone());
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

function lengthHint(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parseInt(value, 10);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
