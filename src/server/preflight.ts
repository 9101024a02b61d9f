import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { rule } from "../../gen/hotelops/auth/v1/rule_pb.js";
import { AppError } from "../errors.ts";

/**
 * What a caller gets before it is authenticated, on every face (REST, Connect, gRPC-Web, gRPC):
 * - an RPC that needs a caller, called without any Authorization, is refused with 401 before its body is read or
 *   parsed (an anonymous client cannot make the server read, decompress or parse bodies it would refuse anyway,
 *   nor hold streams open with bodies that never finish). The token itself is verified by the auth interceptor as
 *   for every call; this only spares the work on what would be refused.
 * - a public RPC (login, verify, refresh, the token endpoint, status, health, reflection) reads at most
 *   ANONYMOUS_MAX_BODY_BYTES: none of them needs more, and their callers are not known yet.
 */
export const ANONYMOUS_MAX_BODY_BYTES = 64 * 1024;

export function missingCredentials(method: DescMethod, authorization: string | undefined): AppError | undefined {
  if (authorization !== undefined && authorization !== "") return undefined;
  if (isPublic(method)) return undefined;
  return new AppError("unauthorized", "Authentication required: send Authorization: Bearer <access token>.", {
    headers: { "www-authenticate": "Bearer" },
  });
}

/** The body limit of a method: the anonymous one for public RPCs, else `maxBodyBytes`. */
export function anonymousBodyLimit(method: DescMethod, maxBodyBytes: number): number {
  return isPublic(method) ? Math.min(maxBodyBytes, ANONYMOUS_MAX_BODY_BYTES) : maxBodyBytes;
}

/** Read once per method: getOption builds the option message anew on every call. */
const publicMethods = new Map<DescMethod, boolean>();

export function isPublic(method: DescMethod): boolean {
  let open = publicMethods.get(method);
  if (open === undefined) {
    open = !method.parent.typeName.startsWith("hotelops.") || getOption(method, rule).public;
    publicMethods.set(method, open);
  }
  return open;
}

/** The parts of connect-es's universal server request read here. */
interface UniversalRequest {
  method: string;
  header: Headers;
  body: unknown;
}

const ENCODINGS = ["content-length", "content-encoding", "connect-content-encoding", "grpc-encoding"];

/**
 * The request connect-es's handlers get in place of one refused by missingCredentials: the same call with an
 * empty message as its body (the request's own body is never read), so the interceptors answer it with their 401
 * in the protocol's own format, as for any other call without credentials.
 */
export function withEmptyBody<R extends UniversalRequest>(req: R): R {
  const contentType = req.header.get("content-type") ?? "";
  const body = req.method === "POST" ? emptyMessageBody(contentType) : undefined;
  if (body === undefined) return req;
  const header = new Headers(req.header);
  for (const name of ENCODINGS) header.delete(name);
  return {
    ...req,
    header,
    body: (async function* () {
      yield body;
    })(),
  };
}

/** An empty request message as the protocol of `contentType` frames it; undefined for one it does not know. */
function emptyMessageBody(contentType: string): Uint8Array | undefined {
  const json = contentType.includes("json");
  const message = json ? Buffer.from("{}") : new Uint8Array(0);
  if (contentType.startsWith("application/grpc-web-text"))
    return Buffer.from(Buffer.from(envelope(message)).toString("base64"));
  if (contentType.startsWith("application/grpc")) return envelope(message);
  if (contentType.startsWith("application/connect+")) return undefined;
  return contentType.startsWith("application/json") || contentType.startsWith("application/proto")
    ? message
    : undefined;
}

function envelope(data: Uint8Array): Uint8Array {
  const out = Buffer.alloc(5 + data.byteLength);
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
}

/**
 * The body of a public RPC on connect-es's handlers, stopped with resource_exhausted (413 on Connect) once it
 * passes ANONYMOUS_MAX_BODY_BYTES.
 */
export function withAnonymousBodyLimit<R extends UniversalRequest>(req: R): R {
  const source = req.body;
  if (!(typeof source === "object" && source !== null && Symbol.asyncIterator in source)) return req;
  const chunks = source as AsyncIterable<Uint8Array>;
  return {
    ...req,
    body: (async function* () {
      let received = 0;
      for await (const chunk of chunks) {
        received += chunk.byteLength;
        if (received > ANONYMOUS_MAX_BODY_BYTES)
          throw new ConnectError(
            `message size is larger than ${ANONYMOUS_MAX_BODY_BYTES} bytes, the limit before a caller is authenticated`,
            Code.ResourceExhausted,
          );
        yield chunk;
      }
    })(),
  };
}
