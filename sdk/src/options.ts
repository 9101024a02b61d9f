import type { Interceptor } from "@connectrpc/connect";
import { bearerInterceptor, type Auth } from "./auth.ts";
import { idempotencyInterceptor } from "./idempotency.ts";

/** How the SDK talks to the service: Connect (JSON or binary over HTTP/1.1 or 2), gRPC (HTTP/2) or gRPC-Web. */
export type TransportKind = "connect" | "grpc" | "grpc-web";

export interface HotelOpsClientOptions {
  /** e.g. "https://api.example-hotel.com" (no path). */
  baseUrl: string;
  /** Default "connect". "grpc" is Node only. */
  transport?: TransportKind;
  /** Bearer token, function, mobile session or client credentials; omit for public RPCs (GetStatus). */
  auth?: Auth;
  /** Attach a fresh `idempotency-key` to writes that carry none (default true). */
  idempotencyKeys?: boolean;
  /** Connect only: JSON instead of binary protobuf on the wire (default false). */
  useJson?: boolean;
  /** Node only: "1.1" or "2" for Connect and gRPC-Web (gRPC is always HTTP/2). Default "1.1". */
  httpVersion?: "1.1" | "2";
  /** Run after the SDK's own interceptors. */
  interceptors?: Interceptor[];
  /** Per-call deadline in milliseconds unless the call sets one. */
  defaultTimeoutMs?: number;
}

export function interceptorsOf(opts: HotelOpsClientOptions): Interceptor[] {
  const list: Interceptor[] = [];
  if (opts.idempotencyKeys !== false) list.push(idempotencyInterceptor());
  if (opts.auth !== undefined) list.push(bearerInterceptor(opts.auth));
  return [...list, ...(opts.interceptors ?? [])];
}
