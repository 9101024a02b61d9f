import { getOption, type DescMethod } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { http } from "../../gen/google/api/annotations_pb.js";

/** A fresh Idempotency-Key (a random UUID, 36 visible ASCII characters). Reuse it when retrying the same write. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

const READ = /^(Get|List|Search)[A-Z]/;

/** A write is an RPC bound to a non-GET HTTP method; an RPC without a REST binding is judged by its name. */
export function isWrite(method: DescMethod): boolean {
  const binding = getOption(method, http).pattern;
  if (binding.case !== undefined) return binding.case !== "get";
  return !READ.test(method.name);
}

/**
 * Adds `idempotency-key` metadata to every write that does not carry one, so that a write retried by the
 * transport or by the caller with the same key runs once. Pass your own key in the call's `headers` to retry
 * a write across process restarts.
 */
export function idempotencyInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.header.has("idempotency-key") && isWrite(req.method))
      req.header.set("idempotency-key", newIdempotencyKey());
    return next(req);
  };
}
