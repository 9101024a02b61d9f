import type { IncomingMessage } from "node:http";
import { constants as http2Constants, type Http2ServerRequest } from "node:http2";
import busboy from "busboy";
import { AppError } from "../errors.ts";
import { decodeBody, type Encoding } from "../server/compression.ts";

export type NodeRequest = IncomingMessage | Http2ServerRequest;

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

function refuse(req: NodeRequest, code: "payload_too_large" | "invalid_argument", message: string): AppError {
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
  return new AppError(code, message);
}

function cutOff(req: NodeRequest): void {
  if ("stream" in req) {
    if (!req.stream.closed) req.stream.close(http2Constants.NGHTTP2_NO_ERROR);
  } else req.socket.destroy();
}

function tooLarge(req: NodeRequest, limit: number): AppError {
  return refuse(req, "payload_too_large", `The request body is larger than ${limit} bytes.`);
}

/** A client that went away mid-body: nobody reads the answer, but the handler must not wait forever. */
function gone(): AppError {
  return new AppError("invalid_argument", "The client closed the request before its body was complete.");
}

/**
 * Reads the whole body, refusing (413) as soon as it passes `limit` instead of buffering the rest. With a
 * Content-Encoding the limit holds for the body as sent and again once decompressed: decompression stops
 * at `limit` bytes of output (a zip bomb is refused without being inflated), corrupt data is a 400.
 */
export async function readBody(req: NodeRequest, limit: number, coding?: Encoding): Promise<Buffer> {
  const raw = await readRaw(req, limit);
  return coding === undefined ? raw : decodeBody(coding, raw, limit);
}

function readRaw(req: NodeRequest, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) return Promise.reject(tooLarge(req, limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop();
      reject(tooLarge(req, limit));
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      stop();
      reject(gone());
    };
    const onClose = (): void => {
      if (req.complete) return; // 'end' settles it
      stop();
      reject(gone());
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

/**
 * multipart/form-data: text parts and files, held in memory (each file at most `maxFileBytes`, at most
 * `maxFiles` of them; nothing is written to disk). A part beyond a limit stops reading the upload at once (413).
 */
export function readMultipart(
  req: NodeRequest,
  opts: { maxFileBytes: number; maxFiles: number; maxFieldBytes: number },
): Promise<{ fields: [string, string][]; files: UploadedFile[] }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers as Record<string, string>,
        // busboy reports a part as too large once it REACHES its limit: +1 so exactly the limit is accepted
        limits: {
          fileSize: opts.maxFileBytes + 1,
          files: opts.maxFiles,
          fieldSize: opts.maxFieldBytes + 1,
          fields: 100,
          parts: 200,
        },
      });
    } catch (err) {
      reject(refuse(req, "invalid_argument", `Malformed multipart request: ${(err as Error).message}`));
      return;
    }
    const fields: [string, string][] = [];
    const files: UploadedFile[] = [];
    let settled = false;
    const fail = (code: "payload_too_large" | "invalid_argument", message: string): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser as never);
      reject(refuse(req, code, message));
    };
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated)
        fail("payload_too_large", `Form field ${name} is larger than ${opts.maxFieldBytes} bytes.`);
      else fields.push([name, value]);
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("limit", () =>
        fail("payload_too_large", `File ${info.filename ?? name} is larger than ${opts.maxFileBytes} bytes.`),
      );
      stream.on("close", () => {
        if (!settled)
          files.push({
            field: name,
            filename: info.filename ?? "",
            contentType: info.mimeType,
            content: Buffer.concat(chunks),
          });
      });
    });
    parser.on("filesLimit", () => fail("payload_too_large", `At most ${opts.maxFiles} files are accepted.`));
    parser.on("partsLimit", () => fail("payload_too_large", "Too many parts."));
    parser.on("fieldsLimit", () => fail("payload_too_large", "Too many fields."));
    parser.on("error", (err: Error) => fail("invalid_argument", `Malformed multipart request: ${err.message}`));
    parser.on("close", () => {
      if (settled) return;
      settled = true;
      resolve({ fields, files });
    });
    const abandon = (): void => {
      if (settled || req.complete) return;
      settled = true;
      reject(gone());
    };
    req.on("error", abandon);
    req.on("close", abandon);
    (req as NodeJS.ReadableStream).pipe(parser);
  });
}
