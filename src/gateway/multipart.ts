import busboy from "busboy";
import { AppError } from "../errors.ts";
import { refuse, restRefusals, type NodeRequest } from "../server/body.ts";

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
      reject(refuse(req, new AppError("invalid_argument", `Malformed multipart request: ${(err as Error).message}`)));
      return;
    }
    const fields: [string, string][] = [];
    const files: UploadedFile[] = [];
    let settled = false;
    const fail = (code: "payload_too_large" | "invalid_argument", message: string): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser as never);
      reject(refuse(req, new AppError(code, message)));
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
      reject(restRefusals.gone());
    };
    req.on("error", abandon);
    req.on("close", abandon);
    (req as NodeJS.ReadableStream).pipe(parser);
  });
}
