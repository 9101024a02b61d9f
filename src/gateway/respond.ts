import { pipeline } from "node:stream";
import { COMPRESS_MIN_BYTES, negotiateEncoding } from "../server/compression.ts";
import { send, type NodeResponse } from "../server/http-errors.ts";
import type { NodeRequest } from "./body.ts";

/**
 * Writes a JSON answer. One of at least COMPRESS_MIN_BYTES is compressed with the coding `Accept-Encoding`
 * prefers (compression.ts) by a streaming compressor piped to the client: its output goes out as it is
 * produced, never held whole, with no Content-Length. Smaller answers, clients that accept no coding we have,
 * and HEAD get the text as it is with a Content-Length. `Vary: Accept-Encoding` either way.
 */
export function sendJson(
  req: NodeRequest,
  res: NodeResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  headers["content-type"] = "application/json; charset=utf-8";
  headers.vary = "Accept-Encoding";
  const head = req.method === "HEAD";
  // a string's UTF-8 size is at least its length: only a short one needs counting
  const small = body.length < COMPRESS_MIN_BYTES && Buffer.byteLength(body) < COMPRESS_MIN_BYTES;
  const encoding = head || small ? undefined : negotiateEncoding(req.headers["accept-encoding"]);
  if (encoding === undefined) {
    headers["content-length"] = String(Buffer.byteLength(body));
    send(res, status, headers, head ? undefined : body);
    return;
  }
  headers["content-encoding"] = encoding.name;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const compressor = encoding.compressor();
  // a client that goes away mid-answer ends the pipeline; there is nobody left to tell
  pipeline(compressor, res as NodeJS.WritableStream, () => {});
  compressor.end(body);
}
