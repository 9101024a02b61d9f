import type { DescMethod } from "@bufbuild/protobuf";
import type { Interceptor, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { StatusService } from "../../gen/hotelops/status/v1/status_pb.js";
import { AuthService } from "../../gen/hotelops/auth/v1/auth_pb.js";
import { chain, interceptorsFor, scoped } from "./calls.ts";

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
