import type { DescMethod } from "@bufbuild/protobuf";
import {
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { chain, createRecordingRouter, interceptorsFor, invokeUnary, scoped } from "./calls.ts";
import { createUnaryFastPath } from "./unary.ts";

const status = StatusService.method.getStatus as DescMethod;
const login = AuthService.methods[0]!;

describe("scoped interceptors", () => {
  const seen: string[] = [];
  const mark =
    (name: string): Interceptor =>
    (next) =>
    (req) => {
      seen.push(name);
      return next(req);
    };
  const interceptors = [mark("all"), scoped((m) => m === login, mark("login only"))];
  const call = (list: readonly Interceptor[], method: DescMethod) => {
    seen.length = 0;
    const last = async () => ({}) as UnaryResponse;
    return chain(list, last as (r: UnaryRequest) => Promise<UnaryResponse>)({ method } as UnaryRequest);
  };

  it("runs only on the methods it names, in the router's list as in a method's own", async () => {
    await call(interceptors, status);
    expect(seen).toEqual(["all"]);
    await call(interceptors, login);
    expect(seen).toEqual(["all", "login only"]);
    expect(interceptorsFor(interceptors, status)).toEqual([interceptors[0]]);
    expect(interceptorsFor(interceptors, login)).toEqual(interceptors);
    await call(interceptorsFor(interceptors, login), login);
    expect(seen).toEqual(["all", "login only"]);
  });
});

describe("invokeUnary", () => {
  const context = (): HandlerContext =>
    ({
      method: status,
      service: status.parent,
      requestMethod: "POST",
      url: "http://x/status",
      signal: new AbortController().signal,
      requestHeader: new Headers({ "x-in": "1" }),
      responseHeader: new Headers({ "x-old": "1" }),
      responseTrailer: new Headers(),
      values: createContextValues(),
    }) as unknown as HandlerContext;

  it("gives the implementation the context and the request as the interceptors pass it on", async () => {
    const ctx = context();
    const seen: unknown[] = [];
    const impl = (req: unknown, c: HandlerContext) => {
      seen.push(req, c);
      return { status: "ok" };
    };
    const wrap: Interceptor = (next) => (req) => next({ ...req, message: { wrapped: req.message } } as never);
    const answer = await invokeUnary({ method: status as never, impl, interceptors: [wrap] }, ctx, { a: 1 });
    expect(answer).toEqual({ status: "ok" });
    expect(seen).toEqual([{ wrapped: { a: 1 } }, ctx]);
  });

  it("copies headers and trailers an interceptor answers with into the context's", async () => {
    const ctx = context();
    const replace: Interceptor = (next) => async (req) => {
      const res = await next(req);
      return { ...res, header: new Headers({ "x-new": "2" }), trailer: new Headers({ "x-t": "3" }) };
    };
    await invokeUnary({ method: status as never, impl: () => ({}), interceptors: [replace] }, ctx, {});
    expect([...ctx.responseHeader]).toEqual([["x-new", "2"]]);
    expect([...ctx.responseTrailer]).toEqual([["x-t", "3"]]);
  });

  it("gives the implementation the headers, values and signal an interceptor replaced, as connect-es does", async () => {
    const ctx = context();
    const values = createContextValues();
    const signal = new AbortController().signal;
    const replace: Interceptor = (next) => (req) =>
      next({ ...req, header: new Headers({ "x-replaced": "1" }), contextValues: values, signal });
    let seen: HandlerContext | undefined;
    await invokeUnary(
      {
        method: status as never,
        impl: (_req, c) => {
          seen = c;
          return {};
        },
        interceptors: [replace],
      },
      ctx,
      {},
    );
    expect(seen).not.toBe(ctx);
    expect(seen?.requestHeader.get("x-replaced")).toBe("1");
    expect(seen?.values).toBe(values);
    expect(seen?.signal).toBe(signal);
    expect(seen?.responseHeader).toBe(ctx.responseHeader);
  });
});

describe("recording router", () => {
  it("refuses per-service and per-method options, which only connect-es's path would apply", () => {
    const router = createRecordingRouter({ interceptors: [] });
    expect(() => router.service(StatusService, {}, { readMaxBytes: 10 })).toThrow(/per-service or per-method/);
    expect(() => router.rpc(status as never, (() => ({})) as never, { readMaxBytes: 10 })).toThrow(
      /per-service or per-method/,
    );
    expect(() => router.service(StatusService, {})).not.toThrow();
  });

  it("the unary fast path refuses requireConnectProtocolHeader at start (it would not check the header)", () => {
    const router = createRecordingRouter({ interceptors: [], requireConnectProtocolHeader: true });
    expect(() => createUnaryFastPath(router.direct)).toThrow(/requireConnectProtocolHeader/);
    expect(() => createUnaryFastPath(createRecordingRouter({ interceptors: [] }).direct)).not.toThrow();
  });
});
