import { pipeline, type Writable } from "node:stream";
import { COMPRESS_MIN_BYTES, negotiateEncoding } from "../server/compression.ts";
import { send, setResponseHeader, type NodeResponse } from "../server/http-errors.ts";
import type { NodeRequest } from "../server/body.ts";
import type { Memo } from "../lib/answer-cache.ts";

/**
 * Writes a JSON answer from its text in pieces (codec-text.ts). An answer of one piece is written whole: compressed
 * when it has at least COMPRESS_MIN_BYTES and `Accept-Encoding` names a coding we have (compression.ts), by a
 * streaming compressor piped to the client with no Content-Length, else as it is with a Content-Length. A longer
 * answer is written piece by piece as the client takes it, through the compressor or as it is without a
 * Content-Length (chunked on HTTP/1.1): its whole text is never held. HEAD gets the Content-Length of the plain
 * answer, counted piece by piece, and no body. `Vary: Accept-Encoding` either way. A piece that fails to render
 * after the first has been sent resets the response (the client must not take a cut answer for a whole one) and
 * rejects.
 */
export async function sendJson(
  req: NodeRequest,
  res: NodeResponse,
  status: number,
  headers: Record<string, string>,
  pieces: Iterator<string, void>,
): Promise<void> {
  headers["content-type"] = "application/json; charset=utf-8";
  headers.vary = "Accept-Encoding";
  const head = req.method === "HEAD";
  // a second piece tells a long answer from one that is written whole
  const ahead: string[] = [];
  for (let p = pieces.next(); p.done !== true; p = pieces.next()) if (ahead.push(p.value) === 2) break;
  const whole = ahead.length < 2 ? (ahead[0] ?? "") : undefined;
  // a string's UTF-8 size is at least its length: only a short one needs counting
  const small =
    whole !== undefined && whole.length < COMPRESS_MIN_BYTES && Buffer.byteLength(whole) < COMPRESS_MIN_BYTES;
  const encoding = head || small ? undefined : negotiateEncoding(req.headers["accept-encoding"]);
  if (encoding === undefined && (head || whole !== undefined)) {
    let bytes = 0;
    for (const piece of ahead) bytes += Buffer.byteLength(piece);
    for (let p = pieces.next(); p.done !== true; p = pieces.next()) bytes += Buffer.byteLength(p.value);
    headers["content-length"] = String(bytes);
    send(res, status, headers, head ? undefined : whole);
    return;
  }
  if (encoding !== undefined) headers["content-encoding"] = encoding.name;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) setResponseHeader(res, name, value);
  let sink: Writable = res as Writable;
  if (encoding !== undefined) {
    const compressor = encoding.compressor();
    // a client that goes away mid-answer ends the pipeline; there is nobody left to tell
    pipeline(compressor, res as NodeJS.WritableStream, () => {});
    sink = compressor;
  }
  if (whole !== undefined) {
    sink.end(whole);
    return;
  }
  // false once the client went away: nothing more is rendered for it
  let gone = false;
  res.once("close", () => (gone = true));
  const write = async (piece: string): Promise<boolean> => sink.write(piece) || (!gone && drained(sink, res));
  try {
    let open = true;
    for (const piece of ahead) open &&= await write(piece);
    for (let p = pieces.next(); open && p.done !== true; p = pieces.next()) open = await write(p.value);
    if (!open) return;
  } catch (err) {
    sink.destroy();
    res.destroy();
    throw err;
  }
  sink.end();
}

/** Resolves once `sink` takes more (true) or the response closed first (false: the client went away). */
function drained(sink: Writable, res: NodeResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      sink.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    sink.once("drain", onDrain);
    res.once("close", onClose);
  });
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
  text: () => Buffer,
): Promise<void> {
  headers["content-type"] = "application/json; charset=utf-8";
  headers.vary = "Accept-Encoding";
  const head = req.method === "HEAD";
  const json = await memo.get("identity", async () => text());
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
