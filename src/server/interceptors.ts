import { Code, ConnectError, type ContextValues, type Interceptor } from "@connectrpc/connect";
import { create, type DescMethod } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../../gen/hotelops/api/v1/rest_pb.js";
import { AppError, errorCodes, toAppError, type ErrorCode } from "../errors.ts";
import { createAccessLog, type Logger } from "../lib/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { contextFromHeaders, inSpan, SpanKind, type Tracing } from "../observability/tracing.ts";
import { callInfoKey, requestIdFrom, type CallInfo } from "./context.ts";
import { unstorableTextIn } from "../lib/text.ts";
import { callDeadlineOf, runWithDeadline, throwIfDeadlinePassed } from "../lib/deadline.ts";

/** The call info of a request; calls that arrive without one (in-memory tests) get one made here. */
function callInfoOf(values: ContextValues, header: Headers): CallInfo {
  let info = values.get(callInfoKey);
  if (info === undefined) {
    info = { requestId: requestIdFrom(header.get("x-request-id")), remoteAddress: "", transport: "connect" };
    values.set(callInfoKey, info);
  }
  return info;
}

/**
 * Outermost interceptor: request id out, one access-log line per call, and the single place where any error
 * becomes the wire error (AppError code -> Connect/gRPC code, with an ErrorInfo detail carrying our code).
 */
export function createCallInterceptor(
  logger: Logger,
  telemetry: { metrics?: Metrics | undefined; tracing?: Tracing | undefined } = {},
): Interceptor {
  const { metrics, tracing } = telemetry;
  const access = createAccessLog(logger);
  const call: Interceptor = (next) => async (req) => {
    const info = callInfoOf(req.contextValues, req.header);
    const started = performance.now();
    const rpc = rpcName(req.method);
    try {
      // A deadline that has already passed (grpc-timeout, Connect-Timeout-Ms of 0 or spent on the way) does not
      // start the call; one that passes while the call waits for a connection or a limiter abandons it there.
      const deadline = callDeadlineOf(req.signal, req.header);
      throwIfDeadlinePassed(deadline);
      if (!req.stream) {
        const unstorable = unstorableTextIn(req.message);
        if (unstorable !== undefined) throw unstorable;
      }
      const res = await runWithDeadline(deadline, () => next(req));
      res.header.set("x-request-id", info.requestId);
      // A server stream's outcome is known when its messages end: it is logged, counted and mapped then.
      if (res.stream) return { ...res, message: mapStreamEnd(res.message, done, fail) };
      done();
      return res;
    } catch (thrown) {
      throw fail(thrown);
    }
    function done(): void {
      const ms = elapsed(started);
      metrics?.observeCall(info.transport, rpc, "ok", ms / 1000);
      access({ requestId: info.requestId, rpc, transport: info.transport, ms, code: "ok" });
    }
    function fail(thrown: unknown): ConnectError {
      const err = thrown instanceof ConnectError ? fromConnectError(thrown) : toAppError(thrown);
      info.error = err;
      const ms = elapsed(started);
      metrics?.observeCall(info.transport, rpc, err.code, ms / 1000);
      if (err.code === "internal")
        logger.error({ requestId: info.requestId, rpc, transport: info.transport, ms, err: thrown }, "call failed");
      else access({ requestId: info.requestId, rpc, transport: info.transport, ms, code: err.code });
      return toConnectError(err, info.requestId);
    }
  };
  if (tracing === undefined) return call;
  // A server span per RPC, continuing the caller's W3C traceparent on every face (the REST gateway forwards it).
  return (next) => {
    const inner = call(next);
    return (req) => {
      const info = callInfoOf(req.contextValues, req.header);
      const attributes = {
        "rpc.system": "connect_rpc",
        "rpc.service": req.service.typeName,
        "rpc.method": req.method.name,
        "hotelops.face": info.transport,
        "hotelops.request_id": info.requestId,
      };
      return inSpan(
        tracing.tracer,
        rpcName(req.method),
        { kind: SpanKind.SERVER, parent: contextFromHeaders(req.header), attributes },
        async (span) => {
          try {
            return await inner(req);
          } catch (err) {
            if (err instanceof ConnectError) span.setAttribute("rpc.connect_rpc.error_code", Code[err.code]);
            throw err;
          }
        },
      );
    };
  };
}

/** The messages of a server stream, with its end reported (`done`) and an error it ends with mapped (`fail`). */
async function* mapStreamEnd<T>(
  messages: AsyncIterable<T>,
  done: () => void,
  fail: (thrown: unknown) => ConnectError,
): AsyncGenerator<T> {
  try {
    yield* messages;
  } catch (thrown) {
    throw fail(thrown);
  }
  done();
}

/** `package.Service/Method`, made once per method (a label and log field of every call). */
const rpcNames = new Map<DescMethod, string>();
function rpcName(method: DescMethod): string {
  let name = rpcNames.get(method);
  if (name === undefined) rpcNames.set(method, (name = `${method.parent.typeName}/${method.name}`));
  return name;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

function toConnectError(err: AppError, requestId: string): ConnectError {
  // x-request-id is already a response header (set by the dispatcher for every call).
  const metadata = new Headers({ "x-error-code": err.code, ...err.headers });
  if (err.retryAfterSeconds !== undefined)
    metadata.set("retry-after", String(Math.max(1, Math.ceil(err.retryAfterSeconds))));
  const detail = create(ErrorInfoSchema, { code: err.code, requestId, details: err.details });
  return new ConnectError(err.message, errorCodes[err.code].rpc, metadata, [{ desc: ErrorInfoSchema, value: detail }]);
}

/** Errors raised by Connect itself (bad protocol input, size limits) keep their meaning in our table. */
function fromConnectError(e: ConnectError): AppError {
  const byCode: Partial<Record<Code, ErrorCode>> = {
    [Code.InvalidArgument]: "invalid_argument",
    [Code.ResourceExhausted]: "payload_too_large",
    [Code.Unauthenticated]: "unauthorized",
    [Code.PermissionDenied]: "forbidden",
    [Code.NotFound]: "not_found",
    [Code.Unimplemented]: "method_not_allowed",
    [Code.Unavailable]: "unavailable",
    // the caller's deadline (connect-timeout-ms, grpc-timeout) passed while the call ran
    [Code.DeadlineExceeded]: "request_timeout",
  };
  const code = byCode[e.code];
  return code === undefined ? toAppError(e) : new AppError(code, e.rawMessage, { cause: e });
}
