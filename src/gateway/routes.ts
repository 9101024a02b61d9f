import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";
import { rest, type RestOptions } from "../../gen/hotelops/api/v1/rest_pb.js";
import { literalPath, matchTemplate, parseTemplate, type PathTemplate } from "./template.ts";

/** One REST binding of an RPC. The OpenAPI generator reads the same table. */
export interface Route {
  httpMethod: string;
  template: PathTemplate;
  /** "" (no body), "*" or a top-level field name. */
  body: string;
  responseBody: string;
  rest: RestOptions;
  method: DescMethod;
}

/** Builds the route table from the google.api.http options of the methods (and their additional bindings). */
export function routesOf(methods: readonly { method: DescMethod }[]): Route[] {
  const routes: Route[] = [];
  for (const { method } of methods) {
    if (method.methodKind !== "unary") continue;
    const rule = getOption(method, http);
    const restOptions = getOption(method, rest);
    for (const r of [rule, ...rule.additionalBindings]) {
      const bound = bindingOf(r);
      if (bound === undefined) continue;
      routes.push({
        httpMethod: bound.method,
        template: parseTemplate(bound.path),
        body: r.body,
        responseBody: r.responseBody,
        rest: restOptions,
        method,
      });
    }
  }
  return routes;
}

function bindingOf(rule: HttpRule): { method: string; path: string } | undefined {
  const p = rule.pattern;
  switch (p.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      return { method: p.case.toUpperCase(), path: p.value };
    case "custom":
      return { method: p.value.kind.toUpperCase(), path: p.value.path };
    default:
      return undefined;
  }
}

export type Match = { route: Route; vars: Map<string, string> } | { allow: string[] } | undefined;

/**
 * `matchRoute` over `routes`, with the answer for a path that is some route's literal template (`/api/v1/status`)
 * looked up: the routes whose templates match such a path are found once, here, so a call to it tries those
 * alone instead of every template in the table.
 */
export function routeMatcher(routes: readonly Route[]): (httpMethod: string, path: string) => Match {
  const byPath = new Map<string, Route[]>();
  for (const { template } of routes) {
    const path = literalPath(template);
    if (path !== undefined && !byPath.has(path))
      byPath.set(
        path,
        routes.filter((r) => matchTemplate(r.template, path) !== undefined),
      );
  }
  return (httpMethod, path) => matchRoute(byPath.get(path) ?? routes, httpMethod, path);
}

/** The route for a method and path; `allow` when the path exists with other methods (405). */
export function matchRoute(routes: readonly Route[], httpMethod: string, path: string): Match {
  let allow: Set<string> | undefined;
  for (const route of routes) {
    const vars = matchTemplate(route.template, path);
    if (vars === undefined) continue;
    if (route.httpMethod === httpMethod || (httpMethod === "HEAD" && route.httpMethod === "GET"))
      return { route, vars };
    (allow ??= new Set()).add(route.httpMethod);
  }
  return allow === undefined ? undefined : { allow: [...allow].sort() };
}
