import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { rest } from "../../../gen/hotelops/api/v1/rest_pb.js";

export type RateLimitClass = "" | "auth" | "token" | "none";

/** What the platform interceptors need to know about an RPC, read once from its descriptor options. */
export interface MethodPolicy {
  /** "hotelops.x.v1.Service/Method": names the RPC in idempotency rows and hashes. */
  rpc: string;
  /**
   * A write whose outcome the idempotency store keeps, on every face: the proto marks it state_changing (or it
   * requires an Idempotency-Key); never an RPC marked sensitive_response (its answer holds secrets or personal data).
   * REST bindings play no part: a gRPC/Connect-only write is a write too.
   */
  write: boolean;
  /**
   * The RPC documents the Idempotency-Key header (a write, or any unary RPC bound to a REST method other than GET):
   * a key it is sent must be valid, whether or not its outcome is stored.
   */
  idempotencyKeyChecked: boolean;
  idempotencyKeyRequired: boolean;
  rateLimitClass: RateLimitClass;
}

const cache = new WeakMap<DescMethod, MethodPolicy>();

/** Services outside our contract that are never limited (probes and tooling). */
const unlimitedServices = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

export function policyOf(method: DescMethod): MethodPolicy {
  let policy = cache.get(method);
  if (policy === undefined) {
    const options = getOption(method, rest);
    if (options.stateChanging && options.readOnly)
      throw new Error(`${method.parent.typeName}/${method.name}: both state_changing and read_only`);
    const declared = options.rateLimitClass;
    if (declared !== "" && declared !== "auth" && declared !== "token" && declared !== "none")
      throw new Error(`${method.parent.typeName}/${method.name}: unknown rate_limit_class "${declared}"`);
    const write =
      method.methodKind === "unary" &&
      !options.sensitiveResponse &&
      (options.stateChanging || options.idempotencyKeyRequired);
    const verb = getOption(method, http).pattern.case;
    policy = {
      rpc: `${method.parent.typeName}/${method.name}`,
      write,
      idempotencyKeyChecked: write || (method.methodKind === "unary" && verb !== undefined && verb !== "get"),
      idempotencyKeyRequired: options.idempotencyKeyRequired,
      rateLimitClass: unlimitedServices.has(method.parent.typeName) ? "none" : declared,
    };
    cache.set(method, policy);
  }
  return policy;
}
