import { pipeline } from "node:stream";
import { COMPRESS_MIN_BYTES, negotiateEncoding } from "../server/compression.ts";
import { send, type NodeResponse } from "../server/http-errors.ts";
import type { NodeRequest } from "./body.ts";
import type { Memo } from "../lib/answer-cache.ts";

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

/**
 * Writes a cached answer (lib/answer-cache.ts) as sendJson would, from renderings kept in its memo: the JSON once,
 * each coding once, so a repeated read writes stored bytes (with a Content-Length) and renders nothing.
 */
export async function sendMemoized(
  req: NodeRequest,
  res: NodeResponse,
  status: number,
  headers: Record<string, string>,
  memo: Memo,
  text: () => string,
): Promise<void> {
  headers["content-type"] = "application/json; charset=utf-8";
  headers.vary = "Accept-Encoding";
  const head = req.method === "HEAD";
  const json = await memo.get("identity", async () => Buffer.from(text()));
  const encoding =
    head || json.length < COMPRESS_MIN_BYTES ? undefined : negotiateEncoding(req.headers["accept-encoding"]);
  let body = json;
  if (encoding !== undefined) {
    headers["content-encoding"] = encoding.name;
    body = await memo.get(encoding.name, () => encoding.compress(json));
  }
  headers["content-length"] = String(body.length);
  send(res, status, headers, head ? undefined : body);
}
