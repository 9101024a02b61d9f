import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import busboy from "busboy";
import { AppError } from "../errors.ts";

export type NodeRequest = IncomingMessage | Http2ServerRequest;

/** Reads the whole body, refusing (413) as soon as it passes `limit` instead of buffering the rest. */
export async function readBody(req: NodeRequest, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.destroy?.();
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): AppError {
  return new AppError("payload_too_large", `The request body is larger than ${limit} bytes.`);
}

export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

/**
 * multipart/form-data: text parts and files. A file beyond `maxFileBytes` stops the upload at once (413);
 * nothing is written to disk.
 */
export function readMultipart(req: NodeRequest, opts: { maxFileBytes: number; maxFiles: number; maxFieldBytes: number }): Promise<{ fields: [string, string][]; files: UploadedFile[] }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers as Record<string, string>,
        limits: { fileSize: opts.maxFileBytes, files: opts.maxFiles, fieldSize: opts.maxFieldBytes, fields: 100, parts: 200 },
      });
    } catch (err) {
      reject(new AppError("invalid_argument", `Malformed multipart request: ${(err as Error).message}`));
      return;
    }
    const fields: [string, string][] = [];
    const files: UploadedFile[] = [];
    let failed = false;
    const fail = (err: AppError): void => {
      if (failed) return;
      failed = true;
      req.unpipe?.(parser as never);
      req.resume();
      reject(err);
    };
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) fail(new AppError("payload_too_large", `Form field ${name} is too large.`));
      else fields.push([name, value]);
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("limit", () => fail(new AppError("payload_too_large", `File ${info.filename ?? name} is larger than ${opts.maxFileBytes} bytes.`)));
      stream.on("close", () => {
        if (!failed) files.push({ field: name, filename: info.filename ?? "", contentType: info.mimeType, content: Buffer.concat(chunks) });
      });
    });
    parser.on("filesLimit", () => fail(new AppError("payload_too_large", `At most ${opts.maxFiles} files are accepted.`)));
    parser.on("partsLimit", () => fail(new AppError("payload_too_large", "Too many parts.")));
    parser.on("fieldsLimit", () => fail(new AppError("payload_too_large", "Too many fields.")));
    parser.on("error", (err: Error) => fail(new AppError("invalid_argument", `Malformed multipart request: ${err.message}`)));
    parser.on("close", () => {
      if (!failed) resolve({ fields, files });
    });
    (req as NodeJS.ReadableStream).pipe(parser);
  });
}
