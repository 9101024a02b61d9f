import type { DescMethod, DescMethodUnary, DescService } from "@bufbuild/protobuf";
import {
  createConnectRouter,
  type ConnectRouter,
  type ConnectRouterOptions,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";

/** A unary RPC implementation as registered on the router. */
export type UnaryCall = (request: unknown, context: HandlerContext) => unknown;

/**
 * Wraps a Connect router so that every unary implementation registered on it is also kept by method. The REST
 * gateway calls those implementations in memory through the same interceptor chain as the router, without the
 * Connect protocol layer (no binary encode/decode, no stream plumbing) in between.
 */
function recordCalls(router: ConnectRouter): { router: ConnectRouter; calls: Map<DescMethod, UnaryCall> } {
  const calls = new Map<DescMethod, UnaryCall>();
  const recording: ConnectRouter = {
    get handlers() {
      return router.handlers;
    },
    service(service: DescService, impl: object, options?: object) {
      refuseOptions(service.typeName, options);
      for (const method of service.methods) {
        const fn = (impl as Record<string, unknown>)[method.localName];
        if (method.methodKind === "unary" && typeof fn === "function") calls.set(method, fn.bind(impl) as UnaryCall);
      }
      router.service(service as never, impl as never, options as never);
      return recording;
    },
    rpc(method: DescMethod, impl: unknown, options?: object) {
      refuseOptions(`${method.parent.typeName}.${method.name}`, options);
      if (method.methodKind === "unary" && typeof impl === "function") calls.set(method, impl as UnaryCall);
      router.rpc(method as never, impl as never, options as never);
      return recording;
    },
  } as ConnectRouter;
  return { router: recording, calls };
}

/**
 * Options per service or method would apply on connect-es's path only: the REST gateway and the unary fast path
 * serve with the router's options. One set for every face, so the start fails rather than serve two behaviours.
 */
function refuseOptions(name: string, options: object | undefined): void {
  if (options !== undefined && Object.keys(options).length > 0)
    throw new Error(`${name}: per-service or per-method router options are not supported; set them on the router`);
}

/** An interceptor that names the methods it has work for (see `scoped`). */
export type ScopedInterceptor = Interceptor & { appliesTo(method: DescMethod): boolean };

/**
 * An interceptor for the methods `appliesTo` accepts; any other call passes straight on. The REST gateway and the
 * unary fast path leave it out of those methods' chains altogether (`interceptorsFor`): one promise hop, a closure
 * and the check less per call and interceptor.
 */
export function scoped(appliesTo: (method: DescMethod) => boolean, interceptor: Interceptor): ScopedInterceptor {
  const run: Interceptor = (next) => {
    const inner = interceptor(next);
    return (req) => (appliesTo(req.method) ? inner(req) : next(req));
  };
  return Object.assign(run, { appliesTo });
}

/** The interceptors, in router order, that have work for `method` (each unscoped one has, for every method). */
export function interceptorsFor(interceptors: readonly Interceptor[], method: DescMethod): Interceptor[] {
  return interceptors.filter((i) => (i as Partial<ScopedInterceptor>).appliesTo?.(method) ?? true);
}

/** Applies interceptors in router order (the first is the outermost). */
export function chain<T>(interceptors: readonly Interceptor[], last: T): T {
  return interceptors.reduceRight((next, interceptor) => interceptor(next as never) as T, last);
}

/** A unary method's recorded implementation and its interceptors (interceptorsFor), for the gateway and fast path. */
export interface UnarySpec {
  method: DescMethodUnary;
  impl: UnaryCall;
  interceptors: readonly Interceptor[];
}

/** The spec of every unary method among `calls`. */
export function unarySpecs(
  calls: ReadonlyMap<DescMethod, UnaryCall>,
  interceptors: readonly Interceptor[],
): Map<DescMethod, UnarySpec> {
  const specs = new Map<DescMethod, UnarySpec>();
  for (const [method, impl] of calls)
    if (method.methodKind === "unary")
      specs.set(method, {
        method: method as DescMethodUnary,
        impl,
        interceptors: interceptorsFor(interceptors, method),
      });
  return specs;
}

/**
 * Calls a unary implementation through its interceptors, as connect-es's invokeUnaryImplementation does, and
 * returns the implementation's answer as it is (a message or its init shape). The implementation gets `context`
 * itself while the interceptors pass the request's own headers, signal and values on (the common case, no copy);
 * an interceptor that replaces any of them gets a context carrying its replacements, as connect-es merges them.
 * Headers or trailers an interceptor answers with in place of the context's are copied into them.
 */
export async function invokeUnary(spec: UnarySpec, context: HandlerContext, message: unknown): Promise<unknown> {
  const { method, impl } = spec;
  const last = async (r: UnaryRequest): Promise<UnaryResponse> => ({
    stream: false,
    service: method.parent,
    method,
    header: context.responseHeader,
    trailer: context.responseTrailer,
    message: (await impl(r.message, contextOf(r, context))) as never,
  });
  const response = await chain(
    spec.interceptors,
    last,
  )({
    stream: false,
    service: method.parent,
    method,
    requestMethod: context.requestMethod,
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    contextValues: context.values,
    message: message as never,
  });
  copyInto(response.header, context.responseHeader);
  copyInto(response.trailer, context.responseTrailer);
  return response.message;
}

function contextOf(r: UnaryRequest, context: HandlerContext): HandlerContext {
  if (r.header === context.requestHeader && r.contextValues === context.values && r.signal === context.signal)
    return context;
  return { ...context, requestHeader: r.header, values: r.contextValues, signal: r.signal };
}

function copyInto(from: Headers, to: Headers): void {
  if (from === to) return;
  to.forEach((_, name) => to.delete(name));
  from.forEach((value, name) => to.set(name, value));
}

/**
 * A Connect router that also hands the REST gateway and the unary fast path its implementations, interceptors and
 * options (`router.direct`).
 */
export function createRecordingRouter(
  options: ConnectRouterOptions & { interceptors: Interceptor[] },
): ConnectRouter & {
  direct: { calls: Map<DescMethod, UnaryCall>; interceptors: Interceptor[]; options: ConnectRouterOptions };
} {
  // Unknown JSON fields are refused (400 invalid_argument) on Connect as on REST: one rule for every JSON face.
  // connect-es ignores them by default; protobuf JSON and our gateway do not.
  const routerOptions = { ...options, jsonOptions: { ignoreUnknownFields: false, ...options.jsonOptions } };
  const { router, calls } = recordCalls(createConnectRouter(routerOptions));
  // `options`: the unary fast path (unary.ts) serves with the router's own limits, codecs and compressions.
  return Object.assign(router, { direct: { calls, interceptors: options.interceptors, options: routerOptions } });
}
