import { createContextKey } from "@connectrpc/connect";
import type { AppError } from "../errors.ts";
import { newId } from "../lib/ids.ts";

export type Transport = "rest" | "connect" | "grpc" | "grpc-web";

/** What the transport knows about one call; every interceptor and the gateway share it through the context. */
export interface CallInfo {
  requestId: string;
  remoteAddress: string;
  transport: Transport;
  /** Set by the error interceptor so the REST gateway can render the original AppError. */
  error?: AppError;
}

export const callInfoKey = createContextKey<CallInfo | undefined>(undefined, { description: "hotelops call info" });

const validRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming X-Request-Id, otherwise make one. */
export function requestIdFrom(incoming: string | string[] | undefined | null): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && value !== null && validRequestId.test(value) ? value : newId();
}
