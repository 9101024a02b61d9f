import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { rest } from "../../../gen/hotelops/api/v1/rest_pb.js";

export type RateLimitClass = "" | "auth" | "token" | "none";

/** What the platform interceptors need to know about an RPC, read once from its descriptor options. */
export interface MethodPolicy {
  /** "hotelops.x.v1.Service/Method": names the RPC in idempotency rows and hashes. */
  rpc: string;
  /**
   * A write whose outcome the idempotency store keeps: its google.api.http binding is not GET, or it requires an
   * Idempotency-Key; never an RPC marked sensitive_response (its answer holds secrets or personal data).
   */
  write: boolean;
  idempotencyKeyRequired: boolean;
  rateLimitClass: RateLimitClass;
}

const cache = new WeakMap<DescMethod, MethodPolicy>();

/** Services outside our contract that are never limited (probes and tooling). */
const unlimitedServices = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

export function policyOf(method: DescMethod): MethodPolicy {
  let policy = cache.get(method);
  if (policy === undefined) {
    const rule = getOption(method, http);
    const options = getOption(method, rest);
    const binding = rule.pattern.case;
    const customGet = binding === "custom" && rule.pattern.value.kind.toUpperCase() === "GET";
    const boundWrite = binding !== undefined && binding !== "get" && !customGet;
    const declared = options.rateLimitClass;
    if (declared !== "" && declared !== "auth" && declared !== "token" && declared !== "none") throw new Error(`${method.parent.typeName}/${method.name}: unknown rate_limit_class "${declared}"`);
    policy = {
      rpc: `${method.parent.typeName}/${method.name}`,
      write: method.methodKind === "unary" && !options.sensitiveResponse && (boundWrite || options.idempotencyKeyRequired),
      idempotencyKeyRequired: options.idempotencyKeyRequired,
      rateLimitClass: unlimitedServices.has(method.parent.typeName) ? "none" : declared,
    };
    cache.set(method, policy);
  }
  return policy;
}
