import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeHandler } from "./listen.ts";

type Req = Parameters<NodeHandler>[0];

/**
 * Request bodies of the unary fast path (unary.ts), read from the Node request's events with connect-es's limits
 * and messages: a Connect unary body (readAllBytes) and the one enveloped message of a gRPC or gRPC-Web call
 * (the envelope decoder: each envelope at most readMaxBytes; gRPC-Web trailer frames skipped).
 */
export function readBody(req: Req, readMaxBytes: number): Promise<Buffer> {
  const hint = lengthHint(req.headers["content-length"]);
  if (hint !== undefined && hint > readMaxBytes) return Promise.reject(tooLarge(readMaxBytes, hint));
  const chunks: Buffer[] = [];
  let received = 0;
  return consume(req, (chunk) => {
    received += chunk.byteLength;
    if (hint === undefined && received > readMaxBytes) throw tooLarge(readMaxBytes);
    if (hint !== undefined && received > hint) throw promised(hint, received);
    chunks.push(chunk);
  }).then(() => {
    if (hint !== undefined && received < hint) throw promised(hint, received);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
  });
}

export interface Envelope {
  flags: number;
  data: Uint8Array;
}

export function readEnvelope(req: Req, readMaxBytes: number, trailerFlag: number | undefined): Promise<Envelope> {
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
  return consume(req, (chunk) => {
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    while (pendingBytes >= need) {
      const bytes = take(need);
      if (!inBody) {
        flags = bytes[0]!;
        const length = bytes.readUInt32BE(1);
        if (length > readMaxBytes) throw tooLarge(readMaxBytes, length);
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

/** Feeds every chunk of the body to onChunk (which may throw to stop reading) until the end. */
function consume(req: Req, onChunk: (chunk: Buffer) => void): Promise<void> {
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
        // The rest of the body is read and dropped (the stream stays flowing) so that a keep-alive connection
        // reaches its next request; on HTTP/2 the stream is closed once the answer is out (listen.ts).
        stop();
        reject(err as Error);
      }
    };
    const onEnd = (): void => {
      stop();
      resolve();
    };
    const onError = (err: Error): void => {
      stop();
      reject(new ConnectError(err.message, Code.Aborted, undefined, undefined, err));
    };
    // HTTP/2: a stream reset by the client closes the request without an error
    const onClose = (): void => {
      stop();
      reject(new ConnectError("the client closed the request", Code.Aborted));
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onError);
    req.once("close", onClose);
  });
}

function lengthHint(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parseInt(value, 10);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function tooLarge(readMaxBytes: number, size?: number): ConnectError {
  return new ConnectError(
    size === undefined
      ? `message size is larger than configured readMaxBytes ${readMaxBytes}`
      : `message size ${size} is larger than configured readMaxBytes ${readMaxBytes}`,
    Code.ResourceExhausted,
  );
}

function promised(hint: number, received: number): ConnectError {
  return new ConnectError(`protocol error: promised ${hint} bytes, received ${received}`, Code.InvalidArgument);
}
