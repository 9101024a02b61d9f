import { createContextKey, type ContextValues } from "@connectrpc/connect";
import type { Keyed } from "../db/held-transaction.ts";
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

/** Set by the idempotency interceptor on a call whose outcome it keeps (a write with an Idempotency-Key). */
export const keyedKey = createContextKey<Keyed | undefined>(undefined, { description: "hotelops keyed call" });

/**
 * The handle a keyed RPC passes on to the transaction it opens (`transact(work, keyed)`) so that its writes
 * and its stored outcome commit together (held-transaction.ts); undefined for a call without a stored outcome.
 */
export const keyedOf = (ctx: { values: ContextValues }): Keyed | undefined => ctx.values.get(keyedKey);

const validRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming X-Request-Id, otherwise make one. */
export function requestIdFrom(incoming: string | string[] | undefined | null): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && value !== null && validRequestId.test(value) ? value : newId();
}
