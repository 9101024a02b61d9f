import { expect } from "vitest";
import { ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { newId } from "../../src/lib/ids.ts";
import { bearer } from "../helpers/auth.ts";

/** The RPC faces a rule must hold on: Connect (HTTP/1.1) and gRPC (h2c), each over a real socket. */
export const rpcFaces = ["connect", "grpc"] as const;
export type RpcFace = (typeof rpcFaces)[number];

/** A client of `service` on one face, sending the bearer token and a fresh Idempotency-Key on every call. */
export function rpcClient<S extends DescService>(baseUrl: string, face: RpcFace, service: S, token: string): Client<S> {
  const keyed: Interceptor = (next) => async (req) => {
    req.header.set("authorization", bearer(token).authorization);
    if (!req.header.has("idempotency-key")) req.header.set("idempotency-key", newId());
    return next(req);
  };
  const transport =
    face === "grpc"
      ? createGrpcTransport({ baseUrl, interceptors: [keyed] })
      : createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [keyed] });
  return createClient(service, transport);
}

/** Our error body as an RPC caller sees it: the code and the fields named in the details. */
export async function rpcFailure(
  promise: Promise<unknown>,
): Promise<{ code: string; fields: string[]; message: string }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const e = err as ConnectError;
  const [info] = e.findDetails(ErrorInfoSchema);
  return { code: info?.code ?? "", fields: (info?.details ?? []).map((d) => d.field), message: e.rawMessage };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
export type Json = any;

/** A JSON call over REST with a bearer token (and a fresh Idempotency-Key on writes). */
export async function restCall(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { ...bearer(token) };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    headers["idempotency-key"] = newId();
  }
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

/** The fields our REST error body names. */
export const restFields = (body: Json): string[] =>
  ((body?.error?.details ?? []) as { field: string }[]).map((d) => d.field);
