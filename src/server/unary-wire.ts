import type { ServerResponse } from "node:http";
import type { NodeHandler } from "./listen.ts";

// The Node side of the unary fast path (unary.ts): the request's URL, and an answer written as Node takes it.

type Req = Parameters<NodeHandler>[0];
type Res = Parameters<NodeHandler>[1];

/** gRPC and gRPC-Web envelopes (flags, length, data) joined into one buffer, written in one piece. */
export function joinEnvelopes(frames: readonly { flags: number; data: Uint8Array }[]): Buffer {
  const body = Buffer.allocUnsafe(frames.reduce((n, f) => n + 5 + f.data.byteLength, 0));
  let offset = 0;
  for (const f of frames) {
    body[offset] = f.flags;
    body.writeUInt32BE(f.data.byteLength, offset + 1);
    body.set(f.data, offset + 5);
    offset += 5 + f.data.byteLength;
  }
  return body;
}

/** The call's URL as connect-es's handlers see it (scheme, authority, path). */
export function urlOf(req: Req): string {
  const encrypted = "encrypted" in req.socket && req.socket.encrypted === true;
  const authority = "authority" in req ? req.authority : req.headers.host;
  return `${encrypted ? "https" : "http"}://${authority}${req.url ?? ""}`;
}

export function writeHead(res: Res, status: number, header: Record<string, string | string[]>): void {
  (res as ServerResponse).writeHead(status, header);
}

/** A Headers object as Node's writeHead takes it (names in lower case; repeated names as arrays). */
export function nodeHeaders(header: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  header.forEach((value, name) => {
    const existing = out[name];
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  });
  return out;
}
