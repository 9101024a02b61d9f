import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { respecGrpcMessage } from "./grpc-message.ts";

/**
 * connect-es answers a protobuf body it cannot parse with `internal` (its JSON parse errors are already
 * `invalid_argument`), before any interceptor runs. A body the server cannot parse is the caller's error, as
 * connect-go and grpc-go say: this wrapper turns exactly that answer ("parse binary: ...") into
 * invalid_argument on each protocol: Connect (HTTP 400 and the JSON error code), gRPC (grpc-status 3 in the
 * trailers) and gRPC-Web (the trailer frame in the body). On both gRPC protocols it also writes grpc-message the
 * way the gRPC spec says (grpc-message.ts).
 */
export function withParseErrorsAsInvalidArgument(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const contentType = (req.header.get("content-type") ?? "").toLowerCase();
    if (contentType.startsWith("application/grpc-web")) return { ...res, body: rewriteFrames(res.body) };
    if (contentType.startsWith("application/grpc")) return { ...res, body: fixTrailerAfter(res.body, res.trailer) };
    if (contentType.includes("json")) return res; // JSON parse errors are invalid_argument already
    if (res.status === 500) return connectUnary(res);
    return res;
  };
  return Object.assign(wrapped, handler);
}

const PARSE = "parse binary:";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function connectUnary(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of bodyOf(res.body)) chunks.push(chunk);
  const text = decoder.decode(Buffer.concat(chunks));
  if (!text.includes(`"code":"internal"`) || !text.includes(`"message":"${PARSE}`))
    return { ...res, body: once(Buffer.concat(chunks)) };
  const body = encoder.encode(text.replace(`"code":"internal"`, `"code":"invalid_argument"`));
  const header = new Headers(res.header);
  header.set("content-length", String(body.byteLength));
  return { ...res, status: 400, header, body: once(body) };
}

function fixTrailerAfter(
  body: UniversalServerResponse["body"],
  trailer: Headers | undefined,
): AsyncIterable<Uint8Array> {
  return (async function* () {
    yield* bodyOf(body);
    if (trailer?.get("grpc-status") === "13" && decodeURIComponent(trailer.get("grpc-message") ?? "").startsWith(PARSE))
      trailer.set("grpc-status", "3");
    const message = trailer?.get("grpc-message");
    if (message != null && message !== "") trailer!.set("grpc-message", respecGrpcMessage(message));
  })();
}

function rewriteFrames(body: UniversalServerResponse["body"]): AsyncIterable<Uint8Array> {
  return (async function* () {
    // A trailer frame: flag 0x80, 4-byte length, "name: value\r\n" lines. It starts a chunk, and may arrive in
    // more than one (its 5-byte head first): collected until whole.
    let pending: Buffer | undefined;
    for await (const chunk of bodyOf(body)) {
      if (pending === undefined && !(chunk.length >= 5 && chunk[0] === 0x80)) {
        yield chunk;
        continue;
      }
      pending = pending === undefined ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
      if (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
        yield fixTrailerFrame(pending);
        pending = undefined;
      }
    }
    if (pending !== undefined) yield pending;
  })();
}

function fixTrailerFrame(frame: Buffer): Uint8Array {
  let text = decoder.decode(frame.subarray(5));
  const before = text;
  const message = /grpc-message: ?([^\r]*)/.exec(text)?.[1];
  if (/grpc-status: ?13\r\n/.test(text) && decodeURIComponent(message ?? "").startsWith(PARSE))
    text = text.replace(/grpc-status: ?13/, "grpc-status: 3");
  if (message !== undefined && message !== "")
    text = text.replace(/grpc-message: ?[^\r]*/, () => `grpc-message: ${respecGrpcMessage(message)}`);
  if (text === before) return frame;
  const data = encoder.encode(text);
  const out = Buffer.alloc(5 + data.byteLength);
  out[0] = frame[0]!;
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
}

async function* bodyOf(body: UniversalServerResponse["body"]): AsyncIterable<Uint8Array> {
  if (body === undefined) return;
  if (body instanceof Uint8Array) yield body;
  else if (typeof body === "object" && body !== null && Symbol.asyncIterator in body)
    yield* body as AsyncIterable<Uint8Array>;
  else yield encoder.encode(JSON.stringify(body));
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
